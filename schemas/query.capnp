@0x910f18fd0a1e2215;
using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("trailmap::queryproto");
# trailmap query protocol: CLI / query node (ZeroMQ DEALER) -> trailmap-aggregator (ROUTER), 7401.
#
# One Query message in, one Answer message out, matched by id. Every aggregator answers for the
# hosts it owns with partial aggregates (merged histograms per time column and group), never raw
# rows; the caller merges the partials of all shards. Fields are added, never renumbered.

using Ingest = import "ingest.capnp";

struct Query {
  id @0 :UInt64;          # echoed in the Answer
  union {
    histograms @1 :HistogramQuery;
    metrics @2 :Void;     # the metric catalog
    stacks @3 :StackQuery;
    status @4 :Void;      # this shard's health (ShardStatus)
    completeness @7 :CompletenessQuery;  # how far it has applied each host (replica choice)
  }
  replicas @5 :Replicas;  # set in a replicated cluster's queries (core/cluster.h): answer only
                          # for the host-seconds this round gives the member named
  limits @6 :QueryLimits; # what the client allows this query to cost; the aggregator takes the
                          # smaller of each and its own limits (unset or 0 = its own)
}

# A query's deadline and cost budget (core/query_wire.h QueryLimits). Past any of them the
# aggregator stops the scan and answers with `error` naming the limit and `overBudget` set.
struct QueryLimits {
  deadlineMs @0 :UInt64;      # answer within this long of the query's arrival
  maxKeys @1 :UInt64;         # stored keys read (every key a scan visits, kept or not)
  maxGroups @2 :UInt64;       # groups in the answer
  maxCells @3 :UInt64;        # cells (column x group) in the answer
  maxAnswerBytes @4 :UInt64;  # bytes of the encoded answer
}

# The cluster as the query layer knows it (no endpoints) and one round's selection. A shard
# answers a histogram or stack query only for the host-seconds whose owners' choice is
# `member` (core/cluster.h ReplicaAnswers). Replication 0 (the default) = not set: answer all.
struct Replicas {
  replication @0 :UInt32;
  members @1 :List(ReplicaMember);
  epochs @2 :List(ReplicaEpoch);
  member @3 :Text;            # the member this copy of the query is sent to
  round @4 :UInt32;           # 0 for the first
  down @5 :List(Text);        # members found down in earlier rounds
  downIn @6 :List(UInt32);    # the round each of `down` failed in
  prefer @7 :List(ReplicaPreference);
                              # hosts whose most complete owner is not their first: that owner
                              # comes first for them (core/cluster.h "Replicas by completeness");
                              # sorted by (host, epoch). An aggregator older than this field
                              # ignores it and answers by the owner order.
}

struct ReplicaPreference {
  host @0 :Text;
  epoch @1 :UInt32;           # index into Replicas.epochs
  member @2 :Text;            # the owner that comes first for this host in this epoch
}

# Which hosts this aggregator has applied only up to a second before `before`, and how far: what
# a replicated query asks first, to take each host from its most complete owner.
struct CompletenessQuery {
  hosts @0 :List(Text);       # only these hosts (whatever their second); empty = every host held
  before @1 :Int64;           # with no hosts named: report the hosts applied through a second
                              # before this one only
}

# One host's newest second applied (its agents' batches are applied in sequence: all it sent
# before that second is applied too).
struct HostThrough {
  host @0 :Text;
  through @1 :Int64;          # unix seconds
}

struct ReplicaMember {
  name @0 :Text;
  zone @1 :Text;
}

struct ReplicaEpoch {
  from @0 :Int64;             # unix seconds; the first epoch's holds before it too
  members @1 :List(UInt32);   # indexes into Replicas.members
}

# Stack samples of one metric (kind `stacks`) merged over [from, to), the hosts and the predicate.
struct StackQuery {
  metric @0 :Text;        # e.g. "cpu.stacks"
  from @1 :Int64;         # unix seconds, inclusive
  to @2 :Int64;           # unix seconds, exclusive
  hosts @3 :List(Text);   # only these hosts; empty = every host
  where @4 :Text;         # predicate on host, labels and fields (execname, pid); no value
                          # comparisons. Evaluated in the aggregator.
  groupBy @5 :Text;       # "" = none; "host", a label or a field key: each stack gets that
                          # value (or "(none)") as its first frame, so groups sit side by side
  region @6 :RegionBand;  # region -> code (docs/region-flame.md), when hasRegion: the stacks
                          # of the host-seconds holding events of region.metric that region.where
                          # keeps, each counted once per such event; from/to are the region's
                          # seconds, where and groupBy empty
  hasRegion @7 :Bool;
}

# A region's selection, found by the aggregator under the same snapshot as the stacks.
struct RegionBand {
  metric @0 :Text;        # the latency or size metric whose events select
  where @1 :Text;         # predicate comparing the value (the band), and on host, labels, fields
  baseline @2 :Bool;      # also answer StackAnswer.baseline: the selected hosts' other seconds
  baselineFrom @3 :Int64; # of [baselineFrom, baselineTo), which holds [from, to), each once
  baselineTo @4 :Int64;
}

struct HistogramQuery {
  metric @0 :Text;
  from @1 :Int64;         # unix seconds, inclusive
  to @2 :Int64;           # unix seconds, exclusive
  step @3 :UInt32;        # seconds per column; column c covers [from + c*step, from + (c+1)*step)
  groupBy @4 :Text;       # "" = one group; "host"; or a field key such as "op"
  hosts @5 :List(Text);   # only these hosts; empty = every host
  where @6 :Text;         # a predicate (core/predicate.h) on fields, host, labels and the value;
                          # "" = everything. Evaluated here, in the aggregator (pushed down).
                          # Text, or the JSON form when it starts with '{' (docs/predicates.md).
  summaries @7 :Bool;     # answer with HistogramAnswer.summaries (count, sum, min, max per
                          # cell) instead of cells: what a line chart needs, a few numbers a cell.
                          # A scalar metric's summaries are exact, in the metric's own unit.
}

struct Answer {
  id @0 :UInt64;
  shard @1 :Text;         # which aggregator answered
  error @2 :Text;         # non-empty: this shard could not answer, and why
  overBudget @7 :Bool;    # with `error`: the query hit its deadline or one of its cost limits
                          # (QueryLimits): the same query would fail again; narrow it
  keyRefused @9 :Bool;    # with `error`: the client's key may not query this aggregator (its
                          # clients file): every query with that key is refused alike
  union {
    histograms @3 :HistogramAnswer;
    metrics @4 :List(MetricInfo);
    stacks @5 :StackAnswer;
    status @6 :ShardStatus;
    completeness @8 :List(HostThrough);  # the hosts a CompletenessQuery asked about that it holds
  }
}

# A shard's health: its store's background error and counters since it started.
struct ShardStatus {
  backgroundError @0 :Text;   # RocksDB's background error now; "" = none (writes are taken)
  backgroundErrors @1 :UInt64;  # background errors RocksDB reported
  recoveries @2 :UInt64;      # times the store recovered from one (by itself or DB::Resume)
  rollupFailures @3 :UInt64;  # minute rollups that failed (each retried after a backoff)
  rollupAgedOut @4 :UInt64;   # pending minutes dropped because their 1 s data aged out
  pendingRollups @5 :UInt64;  # minutes whose rollups are behind the 1 s data
  agents @6 :UInt64;          # agents with a watermark
  agentsPruned @7 :UInt64;    # watermarks of idle agents forgotten
  hosts @8 :UInt64;           # hosts it holds data of
  diskBytes @9 :UInt64;       # bytes of its RocksDB files (SST and WAL)
  newestSecond @10 :Int64;    # the newest second of data it applied since start (0 = none):
                              # now - newestSecond is how far behind real time its ingest is
  lastError @11 :Text;        # the last write or rollup error since start, "" = none
  refusedBatches @12 :UInt64;      # batches of a key for a host or agent id not its own
  refusedConnections @13 :UInt64;  # CURVE handshakes of keys it does not list
  rateLimited @14 :UInt64;    # batches answered retryLater: their agent was over its [limits]
  busy @15 :UInt64;           # batches answered retryLater: it held its most unapplied bytes
  limitedAgents @16 :List(LimitedAgent);  # the agents answered retryLater most, most first
  ingestConnections @17 :UInt64;  # CURVE connections admitted now on the ingest socket
  queryConnections @18 :UInt64;   # and on the query socket
  maxConnections @19 :UInt64;     # [limits] max_connections, each socket's cap (0 = none)
  refusedAtCap @20 :UInt64;       # handshakes of listed keys refused: the cap was reached
}

# An agent over its limits (aggregator/server/agent_limits.h).
struct LimitedAgent {
  agent @0 :Text;             # its agent id as the store keeps it ("host/incarnation@key")
  batches @1 :UInt64;         # batches answered retryLater since the aggregator started
  limit @2 :Text;             # the limit it met most: batches, bytes, values, definitions, new_series
}

# The shard's merge: every distinct stack with its summed count (never raw rows).
struct StackAnswer {
  stacks @0 :List(StackTotal);
  baseline @1 :List(StackTotal);      # a region query's baseline, when hasBaseline
  hasBaseline @2 :Bool;
  regionHosts @3 :List(RegionHost);   # a region query's selection by host, name order
}

struct RegionHost {
  host @0 :Text;
  events @1 :UInt64;       # selected events of the host
  hostSeconds @2 :UInt64;  # its seconds holding any
}

struct StackTotal {
  stack @0 :Text;         # folded: frames root first joined by ';'
  count @1 :UInt64;
}

struct HistogramAnswer {
  kind @0 :Ingest.MetricKind;
  unit @1 :Text;
  groups @2 :List(Text);  # group names, indexed by Cell.group ("" when not grouped)
  cells @3 :List(Cell);   # only non-empty cells (none when the query asked for summaries)
  summaries @4 :List(Summary);  # when HistogramQuery.summaries: one per non-empty cell, in
                                # `unit` (a scalar's own unit, not fixed point)
}

# A cell's partial aggregate; shards' summaries of one cell merge by adding count and sum and
# taking the min of min and the max of max.
struct Summary {
  column @0 :UInt32;
  group @1 :UInt32;
  count @2 :UInt64;
  sum @3 :Float64;
  min @4 :Float64;
  max @5 :Float64;
}

struct Cell {
  column @0 :UInt32;
  group @1 :UInt32;
  encoded @2 :Data;       # core/histogram.h sparse encoding of the merged histogram
}

struct MetricInfo {
  name @0 :Text;
  kind @1 :Ingest.MetricKind;
  unit @2 :Text;
  fields @3 :List(Text);  # the field keys its series carry, sorted
  description @4 :Text;   # one line from the agents ("" = none); the latest non-empty one wins
}
