#include "query/fetch/query_environment.h"

#include <cstdlib>
#include <string>

namespace trailmap {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

Status SetUpQueryContext(const ClientKeyFlags& keys, bool need_keys, zmq::context_t* zmq,
                         QueryContext* context) {
  context->zmq = zmq;
  context->env_aggregators = Env("TRAILMAP_AGGREGATORS");
  context->env_cluster = Env("TRAILMAP_CLUSTER");
  context->env_ingest = Env("TRAILMAP_INGEST");
  context->env_config = Env("TRAILMAP_CONFIG");
  context->home = Env("HOME");
  Result<CurveClient> curve = ClientCurve(keys, need_keys);
  if (!curve.ok()) return curve.status();
  context->curve = std::move(curve).value();
  return Status::Ok();
}

}  // namespace trailmap
