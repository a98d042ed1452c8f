@0xd819fd06597d8d66;
using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("trailmap::ingest");
# trailmap ingest protocol: trailmap-agent (ZeroMQ DEALER) -> trailmap-aggregator (ROUTER), 7400.
#
# Each ZeroMQ message from the agent is one Cap'n Proto message holding a Batch (flat, not
# packed); each reply is one message holding an Ack. Fields are added, never renumbered.
#
# Exactly-once: sequence numbers run 1, 2, 3, ... per agent instance. The aggregator keeps a
# watermark per agent (the last sequence applied) and writes a batch together with the new
# watermark in one RocksDB WriteBatch, then acks. It applies only sequence == watermark + 1:
# a lower one is a resend it has already applied (acked `duplicate`, nothing written), a higher
# one means something in between was lost (acked `outOfOrder` with `expected`), and the agent
# resends from there (go-back-N).
#
# Items: a batch whose envelope and structure can be read is applied even when some of its items
# are bad. The aggregator checks each item alone: a series definition (metric name, kind, unit,
# fields, description), each frame and stack definition (a frame name without ';' or control
# characters, ids unique in the batch, a stack of 1 .. max_stack_depth frames, none of them a
# left-out frame), and in every second each histogram delta (it must decode and not be empty),
# scalar (finite) and stack count (1 .. 2^40). A bad item is left out alone, and so is every
# item of a second whose time is outside 1970..2100, every item that refers to a left-out or
# missing series or to a series of another kind, and every stack count of a left-out stack. The rest is applied exactly once
# as usual (one WriteBatch with the watermark), and the `applied` ack, or a later `duplicate`
# ack for the same batch, names the first 16 items left out in `refused` and counts them all in
# `refusedTotal`.
#
# Rejection: what cannot be read as a whole is rejected, and `rejected` for sequence s means
# exactly: s was not applied and never will be. Nothing about any other sequence. Whole-batch
# faults are: not a Cap'n Proto message, a bad agent id, host or labels, more series, seconds,
# histograms, stack counts or definitions than the limits allow, and more than max_bytes. When the agent id and a sequence s >= 1 can be read:
#   - s == watermark + 1: acked `rejected` s, and the watermark moves to s (written alone, WAL
#     on) so the stream continues with s + 1;
#   - s > watermark + 1: not judged before its turn: acked `outOfOrder` with `expected` =
#     watermark + 1, like a readable batch past a gap; it is judged when it is resent in turn;
#   - s <= watermark: acked `rejected` s; nothing moves (s was judged before; an unreadable batch
#     never applies).
# When the agent id or the sequence cannot be read (or the sequence is 0) the ack has sequence 0
# and nothing moves. The agent cannot tell which batch that was, so it treats it as if no answer
# came: its batches stay held, and the ack timeout resends them (a batch the agent encoded is
# always readable, so this happens only to a message damaged in transit). If the store cannot
# write the watermark, no ack is sent, as for any failed write.
#
# Stacks are interned. An agent gives every distinct frame name and every distinct stack (a list
# of frame ids, root first) an agent-local id, never reused under one agent id. A batch carries
# in `frames` and `stacks` only the definitions the agent has not yet sent on this connection;
# `Second.stacks` counts samples by stack id. The aggregator keeps each agent id's definitions
# in memory (learned only from the batch the watermark expects next, not from a duplicate, one
# past a gap or one refused; bounded, idle agents evicted). When the batch it would apply next refers to a stack or frame id it does not know
# (it restarted, or evicted that agent), it applies nothing and acks `needDictionary` with
# `expected` = that batch; the agent then forgets what it has sent, re-encodes every
# unacknowledged batch from `expected` on with full definitions and resends them in order. The
# agent also forgets after every reconnect, and a restarted agent has a new agent id. The
# watermark rule above is unchanged, so applying stays exactly-once.
#
# Limits (aggregator/server/agent_limits.h): the aggregator may answer a batch it can read `retryLater`
# with `retryAfterMs`: s was NOT applied, nothing moved, nothing was learned from it (stack
# definitions included), and the agent must send s again, unchanged (the same encoding), no
# sooner than retryAfterMs from now, then what follows it in order. Two causes, named in
# `reason`: the agent went over one of its per-agent rates ("rate-limited: ..."), or the
# aggregator holds as many received, unapplied bytes as it may ("busy: ..."). Batches sent after
# s on the same connection get their own answers (`retryLater` too, or `outOfOrder` expecting s);
# the agent holds every one of them and resends from s. A retried batch never counts as
# dropped: the agent's spool holds it until it is acked. An agent built before `retryLater`
# existed cannot read such an ack; it resends after its ack timeout, so it is slower, not lossy.
#
# Keys (aggregator/server/ingest_server.h, "Identity"): with CURVE, a batch its connection's key may
# not send (the key lost the ingest right or was removed from the clients file, the host is not
# one the key may write, the agent id belongs to another key) is answered `unauthorized` with the
# reason: s was NOT applied, nothing moved, and the agent holds s and what follows and resends
# from s after a backoff of its own, until it is accepted or its spool's bound drops it. A
# clients file is the operator's to fix, and a reload that went wrong must cost a delay, never
# data: so a key refusal is never `rejected`. An agent built before `unauthorized` existed cannot
# read such an ack; it resends after its ack timeout.
#
# Bounds (core/batch.h BatchLimits): a stack has 1..1000 frames (an agent drops the deepest
# frames of a deeper stack and ends it with the frame "[truncated]"), a frame name 1..512 bytes
# without control characters or ';' (the folded-text separator).

struct Label {
  key @0 :Text;
  value @1 :Text;
}

enum MetricKind {
  latency @0;   # distribution of durations, base unit ns
  size @1;      # distribution of sizes, base unit bytes
  scalar @2;    # one value per second (gauge, or a counter's rate)
  stacks @3;    # stack samples
}

# A series is one metric with one distinct field set. Strings travel once per batch here and
# are referred to by index from the seconds below.
struct SeriesDef {
  metric @0 :Text;        # dotted name, e.g. "disk.latency"
  kind @1 :MetricKind;
  unit @2 :Text;          # base unit of the values: "ns", "B", "1"
  fields @3 :Text;        # canonical field set "k=v,k=v", keys sorted (core/series.h); "" = none
  description @4 :Text;   # what the metric measures, one line ("" = none given); the catalog keeps
                          # the latest non-empty one per metric
}

struct HistogramDelta {
  series @0 :UInt32;      # index into Batch.series
  encoded @1 :Data;       # core/histogram.h sparse encoding
}

struct ScalarValue {
  series @0 :UInt32;      # index into Batch.series
  value @1 :Float64;
}

struct FrameDef {
  id @0 :UInt32;          # agent-local frame id
  name @1 :Text;          # the folded frame text, e.g. "nginx", "do_syscall_64_[k]"
}

struct StackDef {
  id @0 :UInt32;          # agent-local stack id
  frames @1 :List(UInt32);  # frame ids, root first
}

struct StackCount {
  series @0 :UInt32;      # index into Batch.series (a series of kind `stacks`)
  stack @1 :UInt32;       # agent-local stack id (defined in this batch or earlier, see header)
  count @2 :UInt64;       # samples (at least 1)
}

struct Second {
  time @0 :Int64;         # unix seconds of the events (event time, not send time)
  histograms @1 :List(HistogramDelta);
  scalars @2 :List(ScalarValue);
  stacks @3 :List(StackCount);
}

struct Batch {
  agent @0 :Text;         # agent instance id, "host/incarnation"; sequences are per instance
  sequence @1 :UInt64;    # 1, 2, 3, ... (see the header)
  host @2 :Text;          # the host the events came from
  labels @3 :List(Label); # the host's labels, e.g. role=web
  series @4 :List(SeriesDef);
  seconds @5 :List(Second);
  sentAtMs @6 :Int64;     # agent clock when first sent, unix ms (for lag figures)
  frames @7 :List(FrameDef);  # frame definitions not yet sent on this connection
  stacks @8 :List(StackDef);  # stack definitions not yet sent on this connection
}

# One item of a batch the aggregator left out while applying the rest (see "Items" above).
struct RefusedItem {
  kind @0 :Kind;
  second @1 :UInt32;      # index into Batch.seconds (0 for a series or a definition)
  index @2 :UInt32;       # the item's index in Batch.series or in that second's list of its kind
  reason @3 :Text;        # e.g. "second 2 (1700000003), histogram 5: histogram: bucket 3 has count 0"

  enum Kind {
    series @0;            # a series definition (bad name, unit, kind, fields or description)
    histogram @1;
    scalar @2;
    stackCount @3;
    frameDef @4;          # index into Batch.frames
    stackDef @5;          # index into Batch.stacks
  }
}

struct Ack {
  sequence @0 :UInt64;    # the batch this answers (0 if the batch could not be read at all)
  status @1 :Status;
  reason @2 :Text;        # why, for rejected, outOfOrder and needDictionary
  expected @3 :UInt64;    # outOfOrder, needDictionary: the sequence the aggregator wants next
  refused @4 :List(RefusedItem);  # applied, duplicate: the first 16 items left out, in order
  refusedTotal @5 :UInt64;        # applied, duplicate: every item left out (>= refused's length)
  retryAfterMs @6 :UInt32;        # retryLater: wait at least this long before resending (see
                                  # "Limits" in the header)

  enum Status {
    applied @0;           # written (WAL on) together with the watermark
    duplicate @1;         # already applied earlier; nothing written
    rejected @2;          # not applied and never will be (see "Rejection" above)
    outOfOrder @3;        # resend from `expected`
    needDictionary @4;    # refers to a stack/frame id not known here: resend from `expected`
                          # with every definition (see the header)
    retryLater @5;        # not applied, nothing moved: resend it after `retryAfterMs` ("Limits")
    unauthorized @6;      # not applied, nothing moved: the connection's key may not send it now
                          # ("Keys")
  }
}
