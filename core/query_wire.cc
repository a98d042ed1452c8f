#include "core/query_wire.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <kj/exception.h>

#include "core/capnp_bytes.h"
#include "core/counts.h"
#include "core/parallel.h"
#include "core/predicate.h"
#include "schemas/query.capnp.h"

namespace trailmap {
namespace {

// Fewer cells than this an answer decodes on the calling thread.
constexpr size_t kMinCellsToDecodeInParallel = 256;

std::string Str(capnp::Text::Reader t) { return std::string(t.begin(), t.size()); }
capnp::Text::Reader AsText(const std::string& s) { return capnp::Text::Reader(s.data(), s.size()); }

Status Check(const HistogramQuery& q) {
  if (Status s = ValidateMetricName(q.metric); !s.ok()) return s;
  if (q.step == 0) return Status::InvalidArgument("step must be at least 1 second");
  if (Result<Predicate> p = Predicate::Parse(q.where); !p.ok()) {
    return Status::InvalidArgument("--where: " + p.status().message());
  }
  if (q.to <= q.from) {
    return Status::InvalidArgument("empty time range: from " + std::to_string(q.from) +
                                   " is not before to " + std::to_string(q.to));
  }
  // to > from, so the unsigned difference is exact even where the signed one would overflow.
  const uint64_t span = static_cast<uint64_t>(q.to) - static_cast<uint64_t>(q.from);
  const uint64_t columns = span / q.step + (span % q.step != 0);
  if (columns > kMaxQueryColumns) {
    return Status::InvalidArgument(std::to_string(columns) + " columns, at most " +
                                   std::to_string(kMaxQueryColumns) + ": use a larger step");
  }
  return Status::Ok();
}

}  // namespace

Status CheckStackQuery(const StackQuery& q) {
  if (Status s = ValidateMetricName(q.metric); !s.ok()) return s;
  Result<Predicate> p = Predicate::Parse(q.where);
  if (!p.ok()) return Status::InvalidArgument("--where: " + p.status().message());
  const auto [low, high] = p->ValueRange();
  if (low != 0 || high != UINT64_MAX) {
    return Status::InvalidArgument(
        "--where: stacks have no value to compare; filter on host, labels and fields "
        "(execname, pid)");
  }
  if (q.to <= q.from) {
    return Status::InvalidArgument("empty time range: from " + std::to_string(q.from) +
                                   " is not before to " + std::to_string(q.to));
  }
  if (q.region) {
    const RegionBand& r = *q.region;
    if (Status s = ValidateMetricName(r.metric); !s.ok()) return s;
    Result<Predicate> band = Predicate::Parse(r.where);
    if (!band.ok()) return Status::InvalidArgument("region --where: " + band.status().message());
    const auto [band_low, band_high] = band->ValueRange();
    if (band_low == 0 && band_high == UINT64_MAX) {
      return Status::InvalidArgument("region: its predicate must compare the value (the band)");
    }
    if (!q.where.empty() || !q.group_by.empty()) {
      return Status::InvalidArgument(
          "region: --where and --by apply to its metric, not the stacks");
    }
    if (r.baseline && (r.baseline_from > q.from || r.baseline_to < q.to)) {
      return Status::InvalidArgument("region: the baseline's range must hold the region's");
    }
  }
  if (q.group_by.size() > 128 || q.group_by.find_first_of(";, =\n") != std::string::npos) {
    return Status::InvalidArgument("--by \"" + q.group_by.substr(0, 128) +
                                   "\": give host, a label or a field key (no ';', ',', '=')");
  }
  return Status::Ok();
}

namespace {

void EncodeNames(const std::vector<std::string>& names, capnp::List<capnp::Text>::Builder out) {
  for (size_t i = 0; i < names.size(); ++i) out.set(static_cast<unsigned>(i), AsText(names[i]));
}

void EncodeReplicas(const ReplicaScope& scope, queryproto::Replicas::Builder out) {
  const Cluster& c = scope.cluster;
  out.setReplication(c.replication);
  auto members = out.initMembers(static_cast<unsigned>(c.members.size()));
  for (size_t i = 0; i < c.members.size(); ++i) {
    members[static_cast<unsigned>(i)].setName(AsText(c.members[i].name));
    members[static_cast<unsigned>(i)].setZone(AsText(c.members[i].zone));
  }
  auto epochs = out.initEpochs(static_cast<unsigned>(c.epochs.size()));
  for (size_t i = 0; i < c.epochs.size(); ++i) {
    auto e = epochs[static_cast<unsigned>(i)];
    e.setFrom(c.epochs[i].from);
    auto m = e.initMembers(static_cast<unsigned>(c.epochs[i].members.size()));
    for (size_t j = 0; j < c.epochs[i].members.size(); ++j) {
      m.set(static_cast<unsigned>(j), static_cast<uint32_t>(c.epochs[i].members[j]));
    }
  }
  const ReplicaSelection& s = scope.selection;
  out.setMember(AsText(s.member));
  out.setRound(s.round);
  EncodeNames(s.down, out.initDown(static_cast<unsigned>(s.down.size())));
  auto down_in = out.initDownIn(static_cast<unsigned>(s.down_in.size()));
  for (size_t i = 0; i < s.down_in.size(); ++i) down_in.set(static_cast<unsigned>(i), s.down_in[i]);
  if (!s.prefer.empty()) {
    auto prefer = out.initPrefer(static_cast<unsigned>(s.prefer.size()));
    for (size_t i = 0; i < s.prefer.size(); ++i) {
      auto p = prefer[static_cast<unsigned>(i)];
      p.setHost(AsText(s.prefer[i].host));
      p.setEpoch(s.prefer[i].epoch);
      p.setMember(AsText(s.prefer[i].member));
    }
  }
}

// Absent (replication 0) or a cluster CheckCluster accepts whose selection names members of it.
Result<std::optional<ReplicaScope>> DecodeReplicas(queryproto::Replicas::Reader in) {
  if (in.getReplication() == 0) return std::optional<ReplicaScope>();
  // A cluster is small: bounding the lists first keeps a hostile list of empty elements (a few
  // bytes for millions of them) from costing time.
  constexpr unsigned kMaxMembers = 4096, kMaxEpochs = 4096;
  if (in.getMembers().size() > kMaxMembers || in.getEpochs().size() > kMaxEpochs ||
      in.getDown().size() > in.getMembers().size() ||
      in.getDownIn().size() > in.getMembers().size()) {
    return Status::InvalidArgument("replicas: more than " + std::to_string(kMaxMembers) +
                                   " members or epochs, or more down than members");
  }
  for (auto e : in.getEpochs()) {
    if (e.getMembers().size() > in.getMembers().size()) {
      return Status::InvalidArgument("replicas: an epoch lists more members than the cluster has");
    }
  }
  ReplicaScope scope;
  Cluster& c = scope.cluster;
  c.replication = in.getReplication();
  for (auto m : in.getMembers()) c.members.push_back({Str(m.getName()), Str(m.getZone()), "", ""});
  for (auto e : in.getEpochs()) {
    ClusterEpoch epoch;
    epoch.from = e.getFrom();
    for (uint32_t m : e.getMembers()) epoch.members.push_back(m);
    if (!std::is_sorted(epoch.members.begin(), epoch.members.end())) {
      return Status::InvalidArgument("replicas: an epoch's members are not sorted");
    }
    c.epochs.push_back(std::move(epoch));
  }
  if (Status s = CheckCluster(c); !s.ok())
    return Status::InvalidArgument("replicas: " + s.message());
  ReplicaSelection& s = scope.selection;
  s.member = Str(in.getMember());
  for (auto n : in.getDown()) s.down.push_back(Str(n));
  s.round = in.getRound();
  for (uint32_t r : in.getDownIn()) s.down_in.push_back(r);
  if (!c.Find(s.member)) {
    return Status::InvalidArgument("replicas: the member asked, \"" + s.member +
                                   "\", is not in the query's cluster");
  }
  for (const std::string& n : s.down) {
    if (!c.Find(n)) return Status::InvalidArgument("replicas: down member \"" + n + "\" unknown");
  }
  if (s.down_in.size() != s.down.size()) {
    return Status::InvalidArgument("replicas: " + std::to_string(s.down.size()) +
                                   " members down but " + std::to_string(s.down_in.size()) +
                                   " rounds they failed in");
  }
  for (uint32_t r : s.down_in) {
    if (r >= s.round) {
      return Status::InvalidArgument("replicas: a member down in round " + std::to_string(r) +
                                     ", not before round " + std::to_string(s.round));
    }
  }
  if (s.round > 64) return Status::InvalidArgument("replicas: round " + std::to_string(s.round));
  for (auto p : in.getPrefer()) {
    ReplicaPreference preference{Str(p.getHost()), p.getEpoch(), Str(p.getMember())};
    if (preference.host.empty() || preference.epoch >= c.epochs.size() ||
        !c.Find(preference.member)) {
      return Status::InvalidArgument("replicas: preference " + std::to_string(s.prefer.size()) +
                                     ": no host, an epoch past the cluster's or an unknown member");
    }
    if (!s.prefer.empty() && !(std::tie(s.prefer.back().host, s.prefer.back().epoch) <
                               std::tie(preference.host, preference.epoch))) {
      return Status::InvalidArgument("replicas: preferences not sorted by (host, epoch)");
    }
    s.prefer.push_back(std::move(preference));
  }
  return std::optional<ReplicaScope>(std::move(scope));
}

}  // namespace

std::string EncodeQuery(const Query& query) {
  capnp::MallocMessageBuilder message;
  auto q = message.initRoot<queryproto::Query>();
  q.setId(query.id);
  if (query.kind == Query::Kind::kMetrics) {
    q.setMetrics();
  } else if (query.kind == Query::Kind::kStatus) {
    q.setStatus();
  } else if (query.kind == Query::Kind::kCompleteness) {
    auto c = q.initCompleteness();
    EncodeNames(query.completeness.hosts,
                c.initHosts(static_cast<unsigned>(query.completeness.hosts.size())));
    c.setBefore(query.completeness.before);
  } else if (query.kind == Query::Kind::kStacks) {
    const StackQuery& sq = query.stacks;
    auto w = q.initStacks();
    w.setMetric(AsText(sq.metric));
    w.setFrom(sq.from);
    w.setTo(sq.to);
    auto hosts = w.initHosts(static_cast<unsigned>(sq.hosts.size()));
    for (size_t i = 0; i < sq.hosts.size(); ++i)
      hosts.set(static_cast<unsigned>(i), AsText(sq.hosts[i]));
    w.setWhere(AsText(sq.where));
    w.setGroupBy(AsText(sq.group_by));
    if (sq.region) {
      w.setHasRegion(true);
      auto r = w.initRegion();
      r.setMetric(AsText(sq.region->metric));
      r.setWhere(AsText(sq.region->where));
      r.setBaseline(sq.region->baseline);
      r.setBaselineFrom(sq.region->baseline_from);
      r.setBaselineTo(sq.region->baseline_to);
    }
  } else {
    const HistogramQuery& h = query.histograms;
    auto hq = q.initHistograms();
    hq.setMetric(AsText(h.metric));
    hq.setFrom(h.from);
    hq.setTo(h.to);
    hq.setStep(h.step);
    hq.setGroupBy(AsText(h.group_by));
    auto hosts = hq.initHosts(static_cast<unsigned>(h.hosts.size()));
    for (size_t i = 0; i < h.hosts.size(); ++i)
      hosts.set(static_cast<unsigned>(i), AsText(h.hosts[i]));
    hq.setWhere(AsText(h.where));
    hq.setSummaries(h.summaries);
  }
  const std::optional<ReplicaScope>& replicas =
      query.kind == Query::Kind::kStacks ? query.stacks.replicas : query.histograms.replicas;
  if (replicas && query.kind != Query::Kind::kMetrics && query.kind != Query::Kind::kStatus &&
      query.kind != Query::Kind::kCompleteness) {
    EncodeReplicas(*replicas, q.initReplicas());
  }
  if (query.limits != QueryLimits{}) {
    auto l = q.initLimits();
    l.setDeadlineMs(query.limits.deadline_ms);
    l.setMaxKeys(query.limits.max_keys);
    l.setMaxGroups(query.limits.max_groups);
    l.setMaxCells(query.limits.max_cells);
    l.setMaxAnswerBytes(query.limits.max_answer_bytes);
  }
  return MessageToBytes(message);
}

uint64_t QueryIdOf(std::string_view bytes) {
  if (bytes.size() < 8 || bytes.size() % 8 != 0) return 0;
  try {
    FlatMessage message(bytes);
    return message.Root<queryproto::Query>().getId();
  } catch (const kj::Exception&) {
    return 0;
  }
}

Result<Query> DecodeQuery(std::string_view bytes) {
  if (bytes.size() < 8 || bytes.size() % 8 != 0)
    return Status::InvalidArgument("query is not a Cap'n Proto message");
  try {
    FlatMessage message(bytes);
    auto q = message.Root<queryproto::Query>();
    Query query;
    query.id = q.getId();
    if (q.hasLimits()) {
      auto l = q.getLimits();
      query.limits = QueryLimits{l.getDeadlineMs(), l.getMaxKeys(), l.getMaxGroups(),
                                 l.getMaxCells(), l.getMaxAnswerBytes()};
    }
    std::optional<ReplicaScope> replicas;
    if (q.hasReplicas()) {
      Result<std::optional<ReplicaScope>> decoded = DecodeReplicas(q.getReplicas());
      if (!decoded.ok()) return decoded.status();
      replicas = std::move(decoded).value();
    }
    switch (q.which()) {
      case queryproto::Query::METRICS:
        query.kind = Query::Kind::kMetrics;
        return query;
      case queryproto::Query::STATUS:
        query.kind = Query::Kind::kStatus;
        return query;
      case queryproto::Query::COMPLETENESS: {
        query.kind = Query::Kind::kCompleteness;
        auto c = q.getCompleteness();
        for (auto host : c.getHosts()) {
          query.completeness.hosts.push_back(Str(host));
          if (query.completeness.hosts.back().empty()) {
            return Status::InvalidArgument("completeness: an empty host name");
          }
        }
        query.completeness.before = c.getBefore();
        return query;
      }
      case queryproto::Query::STACKS: {
        auto w = q.getStacks();
        query.kind = Query::Kind::kStacks;
        StackQuery& sq = query.stacks;
        sq.metric = Str(w.getMetric());
        sq.from = w.getFrom();
        sq.to = w.getTo();
        for (auto host : w.getHosts()) sq.hosts.push_back(Str(host));
        sq.where = Str(w.getWhere());
        sq.group_by = Str(w.getGroupBy());
        sq.replicas = std::move(replicas);
        if (w.getHasRegion()) {
          auto r = w.getRegion();
          sq.region = RegionBand{Str(r.getMetric()), Str(r.getWhere()), r.getBaseline(),
                                 r.getBaselineFrom(), r.getBaselineTo()};
        }
        if (Status s = CheckStackQuery(sq); !s.ok()) return s;
        return query;
      }
      case queryproto::Query::HISTOGRAMS: {
        auto hq = q.getHistograms();
        HistogramQuery& h = query.histograms;
        h.metric = Str(hq.getMetric());
        h.from = hq.getFrom();
        h.to = hq.getTo();
        h.step = hq.getStep();
        h.group_by = Str(hq.getGroupBy());
        for (auto host : hq.getHosts()) h.hosts.push_back(Str(host));
        h.where = Str(hq.getWhere());
        h.summaries = hq.getSummaries();
        h.replicas = std::move(replicas);
        if (Status s = Check(h); !s.ok()) return s;
        return query;
      }
    }
    return Status::InvalidArgument("unknown query kind");
  } catch (const kj::Exception& e) {
    return Status::InvalidArgument(std::string("query is not a valid Cap'n Proto message: ") +
                                   e.getDescription().cStr());
  }
}

QueryLimits QueryLimits::Within(const QueryLimits& cap) const {
  auto smaller = [](uint64_t asked, uint64_t allowed) {
    return asked == 0 ? allowed : allowed == 0 ? asked : std::min(asked, allowed);
  };
  return QueryLimits{smaller(deadline_ms, cap.deadline_ms), smaller(max_keys, cap.max_keys),
                     smaller(max_groups, cap.max_groups), smaller(max_cells, cap.max_cells),
                     smaller(max_answer_bytes, cap.max_answer_bytes)};
}

void CellSummary::Add(const CellSummary& other) {
  if (other.count == 0) return;
  if (count == 0) {
    min = other.min;
    max = other.max;
  } else {
    min = std::min(min, other.min);
    max = std::max(max, other.max);
  }
  bool saturated = false;  // as a histogram's count does (core/histogram.h)
  count = SaturatingCountAdd(count, other.count, &saturated);
  sum += other.sum;
}

Status QueryCell::Materialize() {
  if (encoded.empty()) return Status::Ok();
  Status s = histogram.MergeEncoded(encoded);
  encoded.clear();
  if (!s.ok()) return Status::Corruption("cell " + std::to_string(column) + ": " + s.message());
  return Status::Ok();
}

void SummarizeCells(HistogramAnswer* answer) {
  for (QueryCell& c : answer->cells) {
    (void)c.Materialize();  // a value that does not decode summarizes as an empty cell
    if (c.histogram.empty()) continue;
    answer->summaries.push_back(CellSummary{
        c.column, c.group, c.histogram.count(), static_cast<double>(c.histogram.sum()),
        static_cast<double>(c.histogram.min()), static_cast<double>(c.histogram.max())});
  }
  answer->cells.clear();
}

std::string EncodeAnswer(const Answer& answer) {
  capnp::MallocMessageBuilder message;
  auto a = message.initRoot<queryproto::Answer>();
  a.setId(answer.id);
  a.setShard(AsText(answer.shard));
  a.setError(AsText(answer.error));
  a.setOverBudget(answer.over_budget);
  a.setKeyRefused(answer.key_refused);
  if (answer.kind == Query::Kind::kMetrics) {
    auto list = a.initMetrics(static_cast<unsigned>(answer.metrics.size()));
    for (size_t i = 0; i < answer.metrics.size(); ++i) {
      list[i].setName(AsText(answer.metrics[i].name));
      list[i].setKind(static_cast<ingest::MetricKind>(answer.metrics[i].kind));
      list[i].setUnit(AsText(answer.metrics[i].unit));
      list[i].setDescription(AsText(answer.metrics[i].description));
      const auto& keys = answer.metrics[i].fields;
      auto fields = list[i].initFields(static_cast<unsigned>(keys.size()));
      for (size_t k = 0; k < keys.size(); ++k)
        fields.set(static_cast<unsigned>(k), AsText(keys[k]));
    }
  } else if (answer.kind == Query::Kind::kStatus) {
    const ShardStatus& s = answer.status;
    auto w = a.initStatus();
    w.setBackgroundError(AsText(s.background_error));
    w.setBackgroundErrors(s.background_errors);
    w.setRecoveries(s.recoveries);
    w.setRollupFailures(s.rollup_failures);
    w.setRollupAgedOut(s.rollup_aged_out);
    w.setPendingRollups(s.pending_rollups);
    w.setAgents(s.agents);
    w.setAgentsPruned(s.agents_pruned);
    w.setHosts(s.hosts);
    w.setDiskBytes(s.disk_bytes);
    w.setNewestSecond(s.newest_second);
    w.setLastError(AsText(s.last_error));
    w.setRefusedBatches(s.refused_batches);
    w.setRefusedConnections(s.refused_connections);
    w.setRateLimited(s.rate_limited);
    w.setIngestConnections(s.ingest_connections);
    w.setQueryConnections(s.query_connections);
    w.setMaxConnections(s.max_connections);
    w.setRefusedAtCap(s.refused_at_cap);
    w.setBusy(s.busy);
    const size_t limited = std::min<size_t>(s.limited_agents.size(), kMaxLimitedAgents);
    auto agents = w.initLimitedAgents(static_cast<unsigned>(limited));
    for (size_t i = 0; i < limited; ++i) {
      agents[i].setAgent(AsText(s.limited_agents[i].agent));
      agents[i].setBatches(s.limited_agents[i].batches);
      agents[i].setLimit(AsText(s.limited_agents[i].limit));
    }
  } else if (answer.kind == Query::Kind::kCompleteness) {
    auto list = a.initCompleteness(static_cast<unsigned>(answer.completeness.size()));
    for (size_t i = 0; i < answer.completeness.size(); ++i) {
      list[static_cast<unsigned>(i)].setHost(AsText(answer.completeness[i].host));
      list[static_cast<unsigned>(i)].setThrough(answer.completeness[i].through);
    }
  } else if (answer.kind == Query::Kind::kStacks) {
    auto sa = a.initStacks();
    const auto encode = [](const FoldedStacks& stacks, auto list) {
      for (size_t i = 0; i < stacks.size(); ++i) {
        list[static_cast<unsigned>(i)].setStack(AsText(stacks[i].stack));
        list[static_cast<unsigned>(i)].setCount(stacks[i].count);
      }
    };
    encode(answer.stacks.stacks, sa.initStacks(static_cast<unsigned>(answer.stacks.stacks.size())));
    if (answer.stacks.baseline) {
      sa.setHasBaseline(true);
      encode(*answer.stacks.baseline,
             sa.initBaseline(static_cast<unsigned>(answer.stacks.baseline->size())));
    }
    const std::vector<RegionHost>& hosts = answer.stacks.region_hosts;
    auto list = sa.initRegionHosts(static_cast<unsigned>(hosts.size()));
    for (size_t i = 0; i < hosts.size(); ++i) {
      list[static_cast<unsigned>(i)].setHost(AsText(hosts[i].host));
      list[static_cast<unsigned>(i)].setEvents(hosts[i].events);
      list[static_cast<unsigned>(i)].setHostSeconds(hosts[i].host_seconds);
    }
  } else {
    const HistogramAnswer& h = answer.histograms;
    auto ha = a.initHistograms();
    ha.setKind(static_cast<ingest::MetricKind>(h.kind));
    ha.setUnit(AsText(h.unit));
    auto groups = ha.initGroups(static_cast<unsigned>(h.groups.size()));
    for (size_t i = 0; i < h.groups.size(); ++i)
      groups.set(static_cast<unsigned>(i), AsText(h.groups[i]));
    auto cells = ha.initCells(static_cast<unsigned>(h.cells.size()));
    std::string buf;
    for (size_t i = 0; i < h.cells.size(); ++i) {
      cells[i].setColumn(h.cells[i].column);
      cells[i].setGroup(h.cells[i].group);
      const std::string* encoded = &h.cells[i].encoded;
      if (encoded->empty()) {
        buf.clear();
        h.cells[i].histogram.EncodeTo(&buf);
        encoded = &buf;
      }
      cells[i].setEncoded(
          capnp::Data::Reader(reinterpret_cast<const kj::byte*>(encoded->data()), encoded->size()));
    }
    if (!h.summaries.empty()) {
      auto list = ha.initSummaries(static_cast<unsigned>(h.summaries.size()));
      for (size_t i = 0; i < h.summaries.size(); ++i) {
        const CellSummary& s = h.summaries[i];
        list[i].setColumn(s.column);
        list[i].setGroup(s.group);
        list[i].setCount(s.count);
        list[i].setSum(s.sum);
        list[i].setMin(s.min);
        list[i].setMax(s.max);
      }
    }
  }
  return MessageToBytes(message);
}

Result<Answer> DecodeAnswer(std::string_view bytes) {
  if (bytes.size() < 8 || bytes.size() % 8 != 0)
    return Status::InvalidArgument("answer is not a Cap'n Proto message");
  try {
    FlatMessage message(bytes, 1ull << 30);
    auto a = message.Root<queryproto::Answer>();
    Answer answer;
    answer.id = a.getId();
    answer.shard = Str(a.getShard());
    answer.error = Str(a.getError());
    answer.over_budget = a.getOverBudget();
    answer.key_refused = a.getKeyRefused();
    if (a.which() == queryproto::Answer::METRICS) {
      answer.kind = Query::Kind::kMetrics;
      for (auto m : a.getMetrics()) {
        MetricInfo info{
            Str(m.getName()), static_cast<MetricKind>(m.getKind()), Str(m.getUnit()), {}};
        // Every metric has a name. Refusing one without it also stops a list of empty structs,
        // which costs no bytes each, from growing a tiny message into millions of entries
        // (found by fuzz/query_fuzz: 216 bytes gave 385,024 metrics).
        if (info.name.empty()) {
          return Status::Corruption("answer metric " + std::to_string(answer.metrics.size()) +
                                    " has no name");
        }
        for (auto key : m.getFields()) info.fields.push_back(Str(key));
        info.description = Str(m.getDescription());
        answer.metrics.push_back(std::move(info));
      }
      return answer;
    }
    if (a.which() == queryproto::Answer::STATUS) {
      answer.kind = Query::Kind::kStatus;
      auto r = a.getStatus();
      answer.status = ShardStatus{Str(r.getBackgroundError()),
                                  r.getBackgroundErrors(),
                                  r.getRecoveries(),
                                  r.getRollupFailures(),
                                  r.getRollupAgedOut(),
                                  r.getPendingRollups(),
                                  r.getAgents(),
                                  r.getAgentsPruned(),
                                  r.getHosts(),
                                  r.getDiskBytes(),
                                  r.getNewestSecond(),
                                  Str(r.getLastError()),
                                  r.getRefusedBatches(),
                                  r.getRefusedConnections(),
                                  r.getRateLimited(),
                                  r.getBusy()};
      auto agents = r.getLimitedAgents();
      if (agents.size() > kMaxLimitedAgents) {
        return Status::Corruption("status answer names " + std::to_string(agents.size()) +
                                  " limited agents, at most " + std::to_string(kMaxLimitedAgents));
      }
      for (auto agent : agents) {
        answer.status.limited_agents.push_back(
            {Str(agent.getAgent()), agent.getBatches(), Str(agent.getLimit())});
      }
      answer.status.ingest_connections = r.getIngestConnections();
      answer.status.query_connections = r.getQueryConnections();
      answer.status.max_connections = r.getMaxConnections();
      answer.status.refused_at_cap = r.getRefusedAtCap();
      return answer;
    }
    if (a.which() == queryproto::Answer::COMPLETENESS) {
      answer.kind = Query::Kind::kCompleteness;
      for (auto h : a.getCompleteness()) {
        // Named hosts only: a list of empty structs costs no bytes (see the metrics above).
        if (h.getHost().size() == 0)
          return Status::Corruption("answer completeness: a host without a name");
        answer.completeness.push_back({Str(h.getHost()), h.getThrough()});
      }
      return answer;
    }
    if (a.which() == queryproto::Answer::STACKS) {
      answer.kind = Query::Kind::kStacks;
      auto sa = a.getStacks();
      const auto decode = [&bytes](auto list, const char* what, FoldedStacks* out) -> Status {
        // A list of empty structs costs no bytes, so its size can claim up to 2^29 elements
        // (tens of GB reserved, std::bad_alloc); reserve no more than real elements could fill.
        out->reserve(std::min<size_t>(list.size(), bytes.size() / 16));
        for (uint32_t i = 0; i < list.size(); ++i) {
          FoldedStack s{Str(list[i].getStack()), list[i].getCount()};
          if (s.stack.empty() || s.count == 0 || s.stack.find('\n') != std::string::npos) {
            return Status::Corruption(std::string("answer ") + what + " " + std::to_string(i) +
                                      ": empty, count 0 or a line break");
          }
          out->push_back(std::move(s));
        }
        return Status::Ok();
      };
      if (Status s = decode(sa.getStacks(), "stack", &answer.stacks.stacks); !s.ok()) return s;
      if (sa.getHasBaseline()) {
        answer.stacks.baseline.emplace();
        if (Status s = decode(sa.getBaseline(), "baseline stack", &*answer.stacks.baseline);
            !s.ok()) {
          return s;
        }
      }
      for (auto h : sa.getRegionHosts()) {
        if (h.getHost().size() == 0) {  // named hosts only, as above
          return Status::Corruption("answer region: a host without a name");
        }
        answer.stacks.region_hosts.push_back({Str(h.getHost()), h.getEvents(), h.getHostSeconds()});
      }
      return answer;
    }
    auto ha = a.getHistograms();
    HistogramAnswer& h = answer.histograms;
    h.kind = static_cast<MetricKind>(ha.getKind());
    h.unit = Str(ha.getUnit());
    for (auto g : ha.getGroups()) h.groups.push_back(Str(g));
    // The cells' places first, then their histograms decoded on the cores: a columns answer of
    // 1,000 hosts is 1,000 histograms of ~500 buckets, and their memory is first touched here.
    auto cells = ha.getCells();
    std::vector<std::string_view> encoded;
    encoded.reserve(std::min<size_t>(cells.size(), bytes.size() / 16));  // as above
    h.cells.reserve(encoded.capacity());
    for (auto c : cells) {
      QueryCell cell;
      cell.column = c.getColumn();
      cell.group = c.getGroup();
      if (cell.group >= h.groups.size())
        return Status::Corruption("answer cell refers to group " + std::to_string(cell.group) +
                                  " of " + std::to_string(h.groups.size()));
      auto d = c.getEncoded();
      encoded.emplace_back(reinterpret_cast<const char*>(d.begin()), d.size());
      // A cell without bytes never decodes: refused here, at the first, as the metrics above,
      // before a list of empty structs (no bytes each) is walked whole.
      if (d.size() == 0) {
        return Status::Corruption("answer cell " + std::to_string(cell.column) + ": " +
                                  cell.histogram.MergeEncoded({}).message());
      }
      h.cells.push_back(std::move(cell));
    }
    std::vector<Status> decoded(encoded.size());
    ParallelFor(encoded.size(), kMinCellsToDecodeInParallel,
                [&](size_t i) { decoded[i] = h.cells[i].histogram.MergeEncoded(encoded[i]); });
    for (size_t i = 0; i < decoded.size(); ++i) {
      if (!decoded[i].ok()) {
        return Status::Corruption("answer cell " + std::to_string(h.cells[i].column) + ": " +
                                  decoded[i].message());
      }
    }
    for (auto s : ha.getSummaries()) {
      CellSummary summary{s.getColumn(), s.getGroup(), s.getCount(),
                          s.getSum(),    s.getMin(),   s.getMax()};
      if (summary.group >= h.groups.size()) {
        return Status::Corruption("answer summary refers to group " +
                                  std::to_string(summary.group) + " of " +
                                  std::to_string(h.groups.size()));
      }
      if (summary.count == 0 || !std::isfinite(summary.sum) || !(summary.min <= summary.max)) {
        return Status::Corruption("answer summary of cell " + std::to_string(summary.column) +
                                  " is not a summary (count 0, or min above max)");
      }
      h.summaries.push_back(summary);
    }
    return answer;
  } catch (const kj::Exception& e) {
    return Status::InvalidArgument(std::string("answer is not a valid Cap'n Proto message: ") +
                                   e.getDescription().cStr());
  }
}

}  // namespace trailmap
