#include "query/run/options.h"

#include <gtest/gtest.h>

#include "query/fetch/view_request.h"

namespace trailmap {
namespace {

struct Inner {
  std::string word = "a";
};
struct Request {
  Inner inner;
  uint32_t rows = 50;
  uint32_t cols = 0;
  double share = -1;
  bool on = false;
  std::string format;
};

const OptionTable<Request>& Table() {
  static const OptionTable<Request> table = [] {
    OptionTable<Inner> inner;
    inner.Choice("word", &Inner::word, {"a", "b"}, "A or b");
    OptionTable<Request> t;
    t.Include(inner, &Request::inner);
    t.Whole("rows", &Request::rows, 1, 2000, "Rows", "100");
    t.Whole("cols", &Request::cols, 1, 10, "Columns", "5").ZeroIsAutomatic();
    t.Number("share", &Request::share, 0, 0.95, "Share", "0.5").NegativeIsAutomatic();
    t.Flag("on", &Request::on, "On");
    t.Choice("format", &Request::format, {"svg", "json"}, "Format").EmptyIsDefault();
    return t;
  }();
  return table;
}

const OptionSpec& Spec(const std::string& name) {
  for (const auto& row : Table().rows()) {
    if (row.spec.name == name) return row.spec;
  }
  std::abort();
}

TEST(Options, ReadParsesChecksAndStoresOrLeavesTheValue) {
  Request r;
  EXPECT_TRUE(ReadOption(Spec("rows"), "2000", &r.rows).ok());
  EXPECT_EQ(r.rows, 2000u);
  EXPECT_EQ(ReadOption(Spec("rows"), "2001", &r.rows).message(),
            "--rows 2001: give a whole number from 1 to 2000");
  EXPECT_EQ(ReadOption(Spec("rows"), "0x10", &r.rows).message(),
            "--rows 0x10: give a whole number from 1 to 2000");
  EXPECT_EQ(r.rows, 2000u);                                  // a refusal stores nothing
  EXPECT_TRUE(ReadOption(Spec("cols"), "0", &r.cols).ok());  // automatic
  EXPECT_EQ(ReadOption(Spec("share"), "1e-1", &r.share).message(), "");
  EXPECT_DOUBLE_EQ(r.share, 0.1);
  EXPECT_EQ(ReadOption(Spec("share"), "-1", &r.share).message(),
            "--share -1: give a number from 0 to 0.95");  // typed: refused
  EXPECT_EQ(ReadOption(Spec("share"), "inf", &r.share).message(),
            "--share inf: give a number from 0 to 0.95");
  EXPECT_EQ(ReadOption(Spec("word"), "c\xff", &r.inner.word).message(),
            "--word c\\xff: give a or b");
  EXPECT_TRUE(ReadOption(Spec("format"), "", &r.format).ok());
  EXPECT_TRUE(ReadOption(Spec("on"), "yes", &r.on).ok());
  EXPECT_TRUE(r.on);
}

TEST(Options, CheckHoldsARequestFilledByCodeToTheSameRanges) {
  Request r;
  EXPECT_TRUE(Table().Check(r).ok());  // the defaults, automatic ones included
  r.rows = 0;
  EXPECT_EQ(Table().Check(r).message(), "--rows 0: give a whole number from 1 to 2000");
  r.rows = 5;
  r.share = 0.96;
  EXPECT_EQ(Table().Check(r).message(), "--share 0.96: give a number from 0 to 0.95");
  r.share = 0.5;
  r.inner.word = "z";
  EXPECT_EQ(Table().Check(r).message(), "--word z: give a or b");
}

TEST(Options, TheSharedRowsNameTheCliOptionsAndKeepTheirDefaults) {
  ViewRequest r;
  EXPECT_EQ(ViewRequestParameters().Check(r).message(), "--metric,-m is required");
  r.metric = "m";
  EXPECT_TRUE(ViewRequestParameters().Check(r).ok());
  std::vector<std::string> names;
  for (const auto& row : ViewRequestParameters().rows()) names.push_back(row.spec.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"metric", "from", "to", "by", "hosts", "where", "aggregators",
                                      "config", "cluster", "timeout", "max-keys", "max-cells"}));
  EXPECT_EQ(OptionText(&r.timeout), "5s");
  EXPECT_EQ(OptionText(&r.max_keys), "");  // 0: its own limit, not shown as a default
}

}  // namespace
}  // namespace trailmap
