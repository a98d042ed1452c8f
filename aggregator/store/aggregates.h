// Aggregates: the fleet's histogram per metric and second, and the same per value of chosen fields
// (e.g. role, zone, op), written at ingest so a fleet view costs by time, not by time × hosts.
//
// What is stored. In the `hist*` families, under the metric id with kAggregateMetricBit set:
//
//   key := (metric | kAggregateMetricBit):u32 second:u64 group:u32 value:u32   (keys.h layout)
//
//   group: the host's owner list at that second (core/cluster.h), e.g. "agg-1,agg-2", interned;
//          "" when the aggregator runs without a cluster file (it alone holds its hosts).
//   value: 0 for the whole fleet; else an interned "field=value", "field=(none)" for data that
//          lacks the field (as a host scan groups it: kNoGroupValue).
//
// Each histogram a batch brings is merged into its host key and, in the same WriteBatch, into
// one fleet key and one key per aggregated field, so an aggregate holds exactly what the hosts
// hold, once (the batch is applied once, ingest_server.h). Rollups, retention and the query plan
// treat aggregate keys as any other (a minute of an aggregate metric is marked pending and rolled
// up like a host's). The field's value is looked up as a query groups by it: the series' fields
// first, then the host's labels at ingest.
//
// Meta (keys.h): 'g' owner list -> id, 'G' id -> owner list; 'v' "field=value" -> id, 'V' id ->
// "field=value"; 'A' field -> [from:i64] marks the aggregate of `field` ("" = the fleet) complete
// from second `from` on (empty value: from the beginning): it holds every histogram of those
// seconds. Only complete aggregates answer queries, and only queries that start at or after
// `from`. A field configured on a store that already holds data is written from then on, and the
// store backfills what came before (aggregator/store/aggregates_backfill.h); until then it is not
// read.
//
// Which queries. A histogram query of all hosts, with no predicate, grouped by nothing or by one
// complete field, reads the aggregate: per second one key per (owner group, value) instead of
// one per (host, series). In a replicated cluster's query (core/cluster.h "Replicas in queries")
// an owner group is read when ReplicaAnswers picks this member for that owner list, which is
// exactly the choice a host scan makes for each of the group's hosts; an aggregator without a
// cluster file cannot tell its hosts' owners, and answers such queries from the hosts. A query
// that prefers another owner than the first for some host this member owns (core/cluster.h
// "Replicas by completeness", while a replica catches up) is answered from the hosts too.
// A host whose labels change is counted under its labels at ingest here and under its current
// labels by a host scan: the two differ only for such hosts, and only when grouping by a label.
//
// Thread safety: the ingest side (GroupFor, ValuesFor, Rollback) runs under the store's write lock;
// Plan and the readers may run on any thread at once (a shared_mutex inside).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/cluster.h"
#include "core/query_wire.h"
#include "core/status.h"

namespace trailmap::aggregator {

inline constexpr uint32_t kAggregateMetricBit = 0x8000'0000u;

// The group name of data that lacks the field a query groups by.
inline constexpr const char* kNoGroupValue = "(none)";

struct AggregateOptions {
  bool enabled = true;                // false: none written or read (--no-aggregates)
  // Backfill aggregates configured on a store that already holds data, in the background
  // (aggregator/store/aggregates_backfill.h); false: they stay unread (--no-backfill).
  bool backfill = true;
  std::vector<std::string> fields;    // besides the fleet, e.g. {"role", "op"}
  std::optional<Cluster> cluster;     // this aggregator's cluster file, if started with one
};

// How a query reads an aggregate (Aggregates::Plan).
struct AggregatePlan {
  uint32_t metric = 0;                     // the aggregate's metric id (with the bit)
  std::vector<uint8_t> groups;             // owner group id -> read
  std::vector<std::string> value_group;    // value id -> the answer's group name
  std::vector<uint8_t> values;             // value id -> read
};

class Aggregates {
 public:
  explicit Aggregates(AggregateOptions options) : options_(std::move(options)) {}

  // Load: one meta entry ('g', 'G', 'v', 'V', 'A'); false if the tag is not one of these.
  // Corruption for an entry that does not decode.
  Result<bool> Restore(std::string_view key, std::string_view value);
  // After loading: for a store that holds no data yet (`empty`), the 'A' markers of every
  // aggregate to write; otherwise the configured aggregates that are not complete, for the log.
  std::vector<std::string> CompleteMarkers(bool empty);
  // The configured aggregates that are not complete: for the log ("(fleet)" for the fleet) and
  // as fields ("" for the fleet), in configuration order.
  std::vector<std::string> Incomplete() const;
  std::vector<std::string> IncompleteFields() const;
  // After the write of AggregateCompleteKey(field) with EncodeSecond(from): read from now on, by
  // queries that start at or after `from`.
  void MarkComplete(const std::string& field, int64_t from);

  // Ingest. A histogram of `host` at `second` goes to the keys (GroupFor(host, second), v) for
  // each v of ValuesFor(its series' fields, the host's labels), both canonical ("k=v,..."): the
  // fleet's (0) first, then one per aggregated field. New ids are added to `meta_puts` as (key,
  // value) to write in the same WriteBatch; Rollback(mark) forgets them if that write fails.
  using MetaPuts = std::vector<std::pair<std::string, std::string>>;
  uint32_t GroupFor(std::string_view host, int64_t second, MetaPuts* meta_puts);
  // The cluster file read again (ingest side, like GroupFor): owner groups from `cluster` on.
  void SetCluster(Cluster cluster);
  // The cluster file the owner groups come from (ingest side: copy it under the store's write
  // lock), and the owner list of `host` at `second` under it ("" without one).
  const std::optional<Cluster>& cluster() const { return options_.cluster; }
  static std::string OwnerList(const std::optional<Cluster>& cluster, std::string_view host,
                               int64_t second);
  // The value text of `field` for a series with `fields` on a host with `labels`, as ValuesFor
  // interns it: "field=value", or "field=(none)".
  static std::string ValueText(std::string_view field, std::string_view fields,
                               std::string_view labels);
  // Ingest side: the id of an owner list / a value text, interned (new ones into meta_puts).
  uint32_t InternGroup(const std::string& owners, MetaPuts* meta_puts);
  uint32_t InternValue(const std::string& text, MetaPuts* meta_puts);
  void ValuesFor(std::string_view fields, std::string_view labels, std::vector<uint32_t>* values,
                 MetaPuts* meta_puts);
  struct Mark {
    size_t groups = 0, values = 0;
  };
  Mark mark() const;
  void Rollback(const Mark& mark);

  // The plan of `query` on metric id `metric` if an aggregate answers it exactly, else nullopt
  // (read the hosts). Call after taking the snapshot the scan reads: every id a key in it uses
  // is known by then.
  std::optional<AggregatePlan> Plan(const HistogramQuery& query, uint32_t metric) const;

 private:
  uint32_t InternLocked(std::vector<std::string>* names,
                        std::unordered_map<std::string, uint32_t>* ids, const std::string& text,
                        char tag, MetaPuts* meta_puts);

  AggregateOptions options_;  // cluster replaced by SetCluster (ingest side)
  mutable std::shared_mutex mu_;
  std::vector<std::string> groups_;  // id - 1 -> owner list
  std::unordered_map<std::string, uint32_t> group_ids_;
  std::vector<std::string> values_;  // id - 1 -> "field=value"
  std::unordered_map<std::string, uint32_t> value_ids_;
  std::map<std::string, int64_t> complete_;  // field ("" = fleet) -> complete from this second
  // Ingest's cache: host -> (epoch index, group id) of the last second it was asked for.
  std::unordered_map<std::string, std::pair<size_t, uint32_t>> host_group_;
  std::string last_host_;  // and the last host's, whose batch is usually still being applied
  std::pair<size_t, uint32_t> last_group_{SIZE_MAX, 0};
};

// Meta keys of the aggregates ('g', 'G', 'v', 'V', 'A').
std::string AggregateCompleteKey(std::string_view field);

}  // namespace trailmap::aggregator
