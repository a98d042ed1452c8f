#include "query/run/subsecond.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "query/testing/perf_script.h"

namespace trailmap {
namespace {

using testing::PerfRecord;

// Columns 0 and 2 of seconds from 1700000100: a, a and b in second 0, c at the end of second 2;
// an idle sample in second 1 and one without a time.
std::string Script() {
  return PerfRecord("app", 1700000100, 0, "a") + PerfRecord("app", 1700000100, 19999, "a") +
         PerfRecord("app", 1700000100, 20000, "b") + PerfRecord("app", 1700000102, 999999, "c") +
         PerfRecord("swapper", 1700000101, 500000, "cpu_idle") +
         "app 42 [000] 7: cpu-clock:\n\t1 f (/a)\n\n";
}

TEST(SubsecondFileView, TheMapAndANoteOfTheUntimedSamples) {
  SubsecondFileRequest request;
  request.name = "stacks.txt";
  request.format = "json";
  Result<ViewDocument> doc = RunSubsecondFileView(request, Script());
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ(doc->format, "json");
  EXPECT_EQ(doc->notes,
            std::vector<std::string>{"trailmap subsecond: 1 samples without a time left out"});
  EXPECT_TRUE(doc->missing.empty());
  const auto j = nlohmann::json::parse(doc->bytes);
  EXPECT_EQ(j["start_second"], 1700000100);
  EXPECT_EQ(j["columns"], 3);
  EXPECT_EQ(j["samples"], 4);
  EXPECT_EQ(j["counts"][0][0], 2);
  EXPECT_EQ(j["counts"][0][1], 1);
  EXPECT_EQ(j["counts"][2][49], 1);

  request.format = "";  // text by default
  doc = RunSubsecondFileView(request, Script());
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->format, "text");
  EXPECT_NE(doc->bytes.find("ms / seconds from 1700000100: 4 samples"), std::string::npos)
      << doc->bytes;
  request.format = "svg";
  doc = RunSubsecondFileView(request, Script());
  ASSERT_TRUE(doc.ok());
  EXPECT_NE(doc->bytes.find("stacks.txt: 4 samples over 3 s from 1700000100"), std::string::npos);
}

TEST(SubsecondFileView, ARangeIsThatRangesFlameGraph) {
  SubsecondFileRequest request;
  request.name = "stacks.txt";
  request.range = "0..0.02";  // the two samples of a in row 0
  request.format = "folded";
  Result<ViewDocument> doc = RunSubsecondFileView(request, Script());
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ(doc->bytes, "app;main;a 2\n");
  request.format = "";  // svg by default
  doc = RunSubsecondFileView(request, Script());
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->format, "svg");
  EXPECT_NE(doc->bytes.find("Flame Graph, 0..0.02 s"), std::string::npos);
  EXPECT_NE(doc->bytes.find("stacks.txt: seconds from 1700000100"), std::string::npos);
  request.format = "json";
  doc = RunSubsecondFileView(request, Script());
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(nlohmann::json::parse(doc->bytes)["value"], 2);
}

TEST(SubsecondFileView, RefusalsNameWhatIsWrong) {
  SubsecondFileRequest request;
  request.name = "idle.txt";
  Result<ViewDocument> doc =
      RunSubsecondFileView(request, PerfRecord("swapper", 5, 500000, "cpu_idle"));
  EXPECT_EQ(doc.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(doc.status().message(),
            "idle.txt holds only idle samples (1); --include-idle draws them");
  request.include_idle = true;
  EXPECT_TRUE(RunSubsecondFileView(request, PerfRecord("swapper", 5, 500000, "cpu_idle")).ok());

  request.name = "empty.txt";
  doc = RunSubsecondFileView(request, "");
  EXPECT_EQ(doc.status().message(),
            "empty.txt holds no timed samples (perf script prints the time column by default; "
            "with -F give `time`)");
  request.name = "stacks.txt";
  request.format = "folded";
  EXPECT_EQ(RunSubsecondFileView(request, Script()).status().message(),
            "the map is drawn as text, svg, png or json, not folded");
  request.range = "0..1";
  request.format = "png";
  EXPECT_EQ(RunSubsecondFileView(request, Script()).status().message(),
            "--range draws svg, folded or json, not png");
  request.range = "2..1";
  doc = RunSubsecondFileView(request, Script());
  EXPECT_EQ(doc.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(doc.status().message().rfind("--range: expected FROM..TO", 0), 0u);
  request.range = "";
  request.format = "";
  request.rows = 0;
  EXPECT_EQ(RunSubsecondFileView(request, Script()).status().message(),
            "--rows must be from 1 to 1000");
}

}  // namespace
}  // namespace trailmap
