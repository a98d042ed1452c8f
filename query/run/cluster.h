// The cluster view, `trailmap cluster` (and later /api/cluster): every aggregator of the cluster
// file (or the --aggregators list), its zone, whether it is a member of the epoch holding now,
// and its health as its status answer gives it (core/query_wire.h ShardStatus): up or not
// answering, RocksDB's background error or its last write or rollup error, hosts it holds,
// agents with a watermark, ingest lag (now less the newest second it applied), bytes on disk,
// rollups behind, and what it refused (batches for a host or agent id not their key's / connections
// of unlisted keys). A member that does not answer is listed as down and in missing_shards (the CLI
// exits 3).
#pragma once

#include <string>

#include "core/status.h"
#include "query/fetch/view_request.h"
#include "query/run/view_document.h"

namespace trailmap {

struct ClusterRequest {
  ViewRequest query;             // only the aggregators and the timeout are used
  std::string format = "table";  // table | json
};

Result<ViewDocument> RunClusterView(const ClusterRequest& request, const QueryContext& context);

}  // namespace trailmap
