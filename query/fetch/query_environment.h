// What a query front end (the `trailmap` program, trailmap-query) reads once at start into its
// QueryContext (query/fetch/view_request.h), so that nothing below main() reads the environment:
//
//   $TRAILMAP_AGGREGATORS, $TRAILMAP_CLUSTER,   where the aggregators are when no flag says
//   $TRAILMAP_CONFIG, $HOME                     (query/fetch/endpoints.h resolves them)
//   $TRAILMAP_INGEST                            where `trailmap import` sends
//   --key, --server-key, --insecure-plaintext   the keys queries are sent with, else
//                                               $TRAILMAP_KEY and $TRAILMAP_SERVER_KEY
#pragma once

#include <zmq.hpp>

#include "core/status.h"
#include "net/client_keys.h"
#include "query/fetch/view_request.h"

namespace trailmap {

// Fills `context`'s environment, ZeroMQ context and keys (ClientCurve(keys, need_keys): its
// errors, its warning); the rest of *context is left as it is.
Status SetUpQueryContext(const ClientKeyFlags& keys, bool need_keys, zmq::context_t* zmq,
                         QueryContext* context);

}  // namespace trailmap
