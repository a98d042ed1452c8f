// HostMask: which hosts a query reads at each second. The hosts it names (every host when it
// names none), and in a replicated cluster's query only those whose host-seconds this member
// answers for in this round (core/cluster.h, "Replicas in queries"; a host's owners in the order
// the query's preferences give, "Replicas by completeness"). The histogram, scalar and
// stack scans test every key with Keeps.
//
// The owners of a host change only at epoch boundaries, so the mask is one vector (host id ->
// kept) per epoch the query's range touches, built once per query: a host's owners are hashed
// once per epoch, never per key. Epochs begin on whole 10 minutes (core/cluster.h), so a rollup
// key (10 s, 60 s, 600 s) lies in one epoch and is kept or not as its seconds are.
//
// Thread safety: immutable once made; the scan threads of one query share it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "aggregator/store/catalog.h"
#include "core/query_wire.h"

namespace trailmap::aggregator {

class HostMask {
 public:
  // The mask of a query over [from, to) naming `hosts` (empty = all) with `replicas` (absent =
  // every host held). Unknown host names are ignored: they are another shard's.
  static HostMask Make(const Catalog& catalog, const std::vector<std::string>& hosts,
                       const std::optional<ReplicaScope>& replicas, int64_t from, int64_t to);

  // No host passes at any second: the scan can be skipped.
  bool keeps_none() const { return none_; }
  bool Keeps(uint32_t host, int64_t second) const {
    if (spans_.empty()) return true;
    const Span& span = spans_.size() == 1 ? spans_[0] : SpanAt(second);
    return host < span.kept.size() && span.kept[host] != 0;
  }

 private:
  struct Span {
    int64_t from = INT64_MIN;   // this span holds from here to the next one's `from`
    std::vector<uint8_t> kept;  // host id -> 1 when kept
  };
  const Span& SpanAt(int64_t second) const;

  std::vector<Span> spans_;  // ascending `from`; empty = every host at every second
  bool none_ = false;
};

}  // namespace trailmap::aggregator
