// The cluster view, `trailmap cluster` (and later /api/cluster): every aggregator the query side
// reads, with its health as its status answer gives it (core/query_wire.h ShardStatus): up or
// not answering, RocksDB's background error, agents with a watermark, rollups behind. A shard
// that does not answer is listed as down and in missing_shards (the CLI exits 3).
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
