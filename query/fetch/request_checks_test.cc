#include "query/fetch/request_checks.h"

#include <gtest/gtest.h>

#include "core/utf8.h"
#include "query/fetch/view_request.h"

namespace trailmap {
namespace {

std::string Refusal(ViewRequest request) {
  const Status s = CheckViewRequest(request);
  EXPECT_TRUE(s.ok() || s.code() == Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(IsValidUtf8(s.message())) << s.message();
  return s.message();
}

ViewRequest WithMetric(std::string metric) {
  ViewRequest r;
  r.metric = std::move(metric);
  return r;
}

TEST(RequestChecks, MetricNamesThatDoNotValidateNameTheFlag) {
  EXPECT_EQ(Refusal(WithMetric("disk.latency")), "");
  EXPECT_EQ(Refusal(WithMetric("")), "");  // catalog queries have none
  EXPECT_EQ(Refusal(WithMetric("\xff")),
            "--metric \"\\xff\": a metric name is 1 to 128 bytes of A-Z a-z 0-9 _ . -");
  EXPECT_EQ(Refusal(WithMetric(std::string("a\0b", 3))),
            "--metric \"a\\x00b\": a metric name is 1 to 128 bytes of A-Z a-z 0-9 _ . -");
  EXPECT_EQ(Refusal(WithMetric("disk\r\nX-Injected: 1")),
            "--metric \"disk\\x0d\\x0aX-Injected: 1\": a metric name is 1 to 128 bytes of A-Z "
            "a-z 0-9 _ . -");
  EXPECT_EQ(Refusal(WithMetric(std::string(10'000, 'a'))),
            "--metric \"" + std::string(64, 'a') +
                "...\": a metric name is 1 to 128 bytes of A-Z a-z 0-9 _ . - (this one is "
                "10000)");
  EXPECT_EQ(Refusal(WithMetric(std::string(128, 'a'))), "");
  EXPECT_NE(Refusal(WithMetric(std::string(129, 'a'))), "");
}

TEST(RequestChecks, ByHostsAndWhere) {
  ViewRequest r = WithMetric("m");
  r.by = "op";
  r.hosts = "web-1,db-ü";
  r.where = "host == \"é\"";
  EXPECT_EQ(Refusal(r), "");
  r.by = "\xff";
  EXPECT_EQ(Refusal(r),
            "--by \"\\xff\": give host or a field key: 1 to 128 bytes of A-Z a-z 0-9 _ . -");
  r.by = "op,disk";
  EXPECT_NE(Refusal(r), "");
  r.by = std::string(129, 'k');
  EXPECT_NE(Refusal(r), "");
  r.by = "host";
  r.hosts = "web-1,\xc3";
  EXPECT_EQ(Refusal(r),
            "--hosts \"\\xc3\": a host name is 1 to 256 bytes of UTF-8 text without control "
            "characters");
  r.hosts = "a\nb";
  EXPECT_NE(Refusal(r), "");
  r.hosts = std::string(257, 'h');
  EXPECT_NE(Refusal(r), "");
  r.hosts = "";
  r.where = "host == \"\xff\"";
  EXPECT_EQ(Refusal(r), "--where \"host == \\\"\\xff\\\"\": not valid UTF-8");
}

TEST(RequestChecks, TimeoutIsCappedAtAMinute) {
  ViewRequest r = WithMetric("m");
  r.timeout = "60s";
  EXPECT_EQ(Refusal(r), "");
  r.timeout = "1h";
  EXPECT_EQ(Refusal(r),
            "--timeout 1h: at most 60s (a query waits at most that long for its shards)");
  r.timeout = "60001ms";
  EXPECT_NE(Refusal(r), "");
  r.timeout = "5\xff";
  EXPECT_EQ(Refusal(r), "--timeout \"5\\xff\": give a duration such as 5s");
  r.timeout = "";
  EXPECT_NE(Refusal(r), "");
}

TEST(RequestChecks, Printable) {
  EXPECT_EQ(Printable("a\"b\\c\x01\xff", 64), "a\\\"b\\\\c\\x01\\xff");
  EXPECT_EQ(Printable("abcdef", 3), "abc...");
}

TEST(RequestChecks, ImagePixels) {
  EXPECT_TRUE(CheckImagePixels("--width 4096 × --height 4096", 4096, 4096).ok());
  const Status s = CheckImagePixels("--width 20000 × --height 10000", 20000, 10000);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "--width 20000 × --height 10000 is 200,000,000 pixels, at most 16,777,216 (16 Mi): ask "
            "for a smaller picture");
  EXPECT_FALSE(CheckImagePixels("x", 4097, 4096).ok());
}

}  // namespace
}  // namespace trailmap
