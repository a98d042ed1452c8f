// Fan-out: one Query to every aggregator at once, answers collected until a deadline.
//
// Each aggregator gets its own DEALER socket connected to its query port (ROUTER); the query
// goes out on all of them before any answer is awaited, so the slowest shard sets the latency,
// not the sum of all. An answer is one frame holding an encoded Answer (core/query_wire.h);
// an empty delimiter frame before it, as REQ-style peers send, is tolerated.
//
// A shard that does not answer by the deadline, answers with something that does not decode,
// answers another query id or answers with `error` set is listed in `failures` with the
// reason (an error answer with id 0 is taken as this query's: the shard could not read it), and the
// caller still gets every other shard's answer: a partial view is better than none, as long as it
// says what is missing (the CLI exits 3).
//
// Thread safety: FanOut may be called from several threads with the same zmq::context_t;
// it creates and closes its own sockets.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "core/cluster.h"
#include "core/query_wire.h"
#include "net/curve_keys.h"

namespace trailmap {

struct FanoutOptions {
  // How long to wait for the last answer, counted from when the query is sent. Default 5 s.
  std::chrono::milliseconds deadline{5000};
  // The CURVE keys every socket connects with (net/curve_keys.h); plaintext when unkeyed.
  CurveClient curve;
  // Query endpoint -> that member's own server key (the cluster file's server_key), used instead
  // of curve.server_key for it (net/cluster_file.h MemberCurve). FanOutAll fills it.
  std::map<std::string, std::string> server_keys;
  // Set: asked every 100 ms while the fan-out waits; once true it stops waiting, and the shards
  // not answered yet are failures ("cancelled").
  std::function<bool()> cancelled;
};

struct ShardFailure {
  std::string endpoint;  // "tcp://10.0.0.7:7401"
  // "no answer within 5000 ms", "error: metric not found", ... A keyed shard that did not answer
  // and whose CURVE handshake failed says how (net/curve_socket.h DescribeHandshakeFailure):
  // "no answer within 5000 ms: CURVE handshake failed: ...".
  std::string reason;
};

struct FanoutResult {
  std::vector<Answer> answers;         // one per shard that answered without error
  std::vector<ShardFailure> failures;  // one per shard that did not: part of the data is missing
  // Replicated queries only: members that did not answer but whose hosts every one came from
  // another replica, so nothing is missing ("agg-2 (tcp://...)", its reason).
  std::vector<ShardFailure> skipped;
  // Shards that refused the query as over its deadline or cost budget (Answer::over_budget), each
  // with its error ("query over budget: ..."): the same query would fail again, so a replicated
  // fan-out asks no further round. Each is in `failures` too.
  std::vector<ShardFailure> over_budget;
  // Shards that refused this client's key (Answer::key_refused), each with its reason ("refused
  // this key: key web may only ingest, not query: ..."). Each is in `failures` too.
  std::vector<ShardFailure> key_refused;
};

// Sends `query` to every endpoint ("tcp://host:port") and waits for the answers.
FanoutResult FanOut(zmq::context_t& context, const std::vector<std::string>& endpoints,
                    const Query& query, const FanoutOptions& options = {});

// A replicated cluster's query (core/cluster.h, "Replicas in queries"): asks the members
// `asked` (indexes into cluster.members, whose `query` endpoints are used) in rounds, each
// answering only for the host-seconds chosen for it, so every host-second is counted once. The
// rounds choose each host's replica by completeness (core/cluster.h "Replicas by completeness";
// the question takes at most a tenth of the deadline, and is not asked when R = 1). The
// first round waits half the deadline when R > 1, so a slow member is skipped while its peers
// still have time to answer for it; later rounds get what is left. A member that did not answer
// is in `skipped` when every host it owns had another owner answer, and its owner sets with no
// member answering are in `failures` ("agg-1+agg-2": the hosts placed on both are missing).
// The query's kind must be histograms or stacks.
FanoutResult FanOutReplicas(zmq::context_t& context, const Cluster& cluster,
                            const std::vector<size_t>& asked, Query query,
                            const FanoutOptions& options = {});

// The owner lists (Cluster::Owners order) that a host may have in `epoch`: every order of R
// members that placement can give, for deciding which failures lose data. At most `limit`;
// more than that is reported as all of them not enumerated (returns false).
bool PossibleOwnerLists(const Cluster& cluster, const ClusterEpoch& epoch, size_t limit,
                        std::vector<std::vector<size_t>>* lists);

// The merge of every shard's stack answer: each distinct stack once, counts added, sorted by
// stack text (what `trailmap collapse` prints). Answers of another kind are skipped. With
// `baseline`, the merge of a region query's baselines instead.
FoldedStacks MergeStackAnswers(const std::vector<Answer>& answers, bool baseline = false);

}  // namespace trailmap
