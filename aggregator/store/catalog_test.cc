#include "aggregator/store/catalog.h"

#include <gtest/gtest.h>

namespace trailmap::aggregator {
namespace {

TEST(CatalogTest, FindOrAddAssignsDenseIdsOnce) {
  Catalog c;
  bool added = false;
  EXPECT_EQ(c.FindOrAddMetric({"disk.latency", MetricKind::kLatency, "ns"}, &added), 1u);
  EXPECT_TRUE(added);
  // The kind and unit of the first sighting stay.
  EXPECT_EQ(c.FindOrAddMetric({"disk.latency", MetricKind::kSize, "B"}, &added), 1u);
  EXPECT_FALSE(added);
  MetricRecord m;
  ASSERT_EQ(c.FindMetric("disk.latency", &m), 1u);
  EXPECT_EQ(m.kind, MetricKind::kLatency);
  EXPECT_EQ(m.unit, "ns");

  EXPECT_EQ(c.FindOrAddHost("web-1", "role=web", &added), 1u);
  EXPECT_EQ(c.FindOrAddHost("web-2", "", &added), 2u);
  EXPECT_EQ(c.FindOrAddHost("web-1", "role=db", &added), 1u);
  EXPECT_FALSE(added);
  EXPECT_EQ(c.Host(1).labels, "role=web");  // labels change only through SetHostLabels
  c.SetHostLabels(1, "role=db");
  EXPECT_EQ(c.Host(1).labels, "role=db");

  // Series ids are global: the same fields under two metrics are two series.
  EXPECT_EQ(c.FindOrAddSeries(1, "op=read", &added), 1u);
  EXPECT_EQ(c.FindOrAddMetric({"net.latency", MetricKind::kLatency, "ns"}, &added), 2u);
  EXPECT_EQ(c.FindOrAddSeries(2, "op=read", &added), 2u);
  EXPECT_TRUE(added);
  EXPECT_EQ(c.FindOrAddSeries(1, "op=read", &added), 1u);
  EXPECT_FALSE(added);
  EXPECT_EQ(c.Series(2).metric, 2u);
  EXPECT_EQ(c.Series(2).fields, "op=read");
  EXPECT_EQ(c.Series(9).metric, 0u);  // unknown: empty record
  EXPECT_EQ(c.host_count(), 2u);
  EXPECT_EQ(c.series_count(), 2u);
}

TEST(CatalogTest, RollbackForgetsWhatAFailedWriteAdded) {
  Catalog c;
  bool added = false;
  c.FindOrAddMetric({"a", MetricKind::kLatency, "ns"}, &added);
  c.FindOrAddHost("h1", "", &added);
  c.FindOrAddSeries(1, "", &added);
  const Catalog::Mark mark = c.mark();
  c.FindOrAddMetric({"b", MetricKind::kLatency, "ns"}, &added);
  c.FindOrAddHost("h2", "", &added);
  c.FindOrAddSeries(2, "x=1", &added);
  c.Rollback(mark);
  EXPECT_EQ(c.FindMetric("b"), std::nullopt);
  EXPECT_EQ(c.FindHost("h2"), std::nullopt);
  EXPECT_EQ(c.series_count(), 1u);
  EXPECT_EQ(c.FindMetric("a"), 1u);
  // The ids are handed out again.
  EXPECT_EQ(c.FindOrAddMetric({"c", MetricKind::kLatency, "ns"}, &added), 2u);
  EXPECT_EQ(c.FindOrAddHost("h3", "", &added), 2u);
  EXPECT_EQ(c.FindOrAddSeries(2, "y=1", &added), 2u);
  const std::vector<MetricInfo> metrics = c.Metrics();
  ASSERT_EQ(metrics.size(), 2u);
  EXPECT_EQ(metrics[0].name, "a");
  EXPECT_EQ(metrics[1].name, "c");
  EXPECT_EQ(metrics[1].fields, std::vector<std::string>{"y"});  // x=1 went with the rollback
}

TEST(CatalogTest, RestoreRefusesGapsRepeatsAndDanglingSeries) {
  Catalog c;
  EXPECT_TRUE(c.RestoreMetric(1, {"a", MetricKind::kLatency, "ns"}).ok());
  Status s = c.RestoreMetric(3, {"b", MetricKind::kLatency, "ns"});
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_EQ(s.message(), "meta: metric id 3 where 2 was expected (ids not dense)");
  EXPECT_EQ(c.RestoreMetric(2, {"a", MetricKind::kLatency, "ns"}).code(),
            Status::Code::kCorruption);
  EXPECT_EQ(c.RestoreSeries(1, {7, ""}).code(), Status::Code::kCorruption);
  EXPECT_TRUE(c.RestoreSeries(1, {1, "op=read"}).ok());
  EXPECT_TRUE(c.RestoreHost(1, {"h", "role=db"}).ok());
  bool added = true;
  EXPECT_EQ(c.FindOrAddSeries(1, "op=read", &added), 1u);
  EXPECT_FALSE(added);
}

}  // namespace
}  // namespace trailmap::aggregator
