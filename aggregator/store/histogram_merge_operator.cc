#include "aggregator/store/histogram_merge_operator.h"

#include "core/histogram.h"

namespace trailmap::aggregator {

Status MergeHistogramEncodings(const std::string_view* existing,
                               const std::vector<std::string_view>& operands, std::string* out,
                               bool* saturated) {
  // One encoding alone (RocksDB reads a key written once through the merge operator): it is its
  // own merge, once it is known to decode. This is every fresh key a query reads; decoding and
  // re-encoding it cost most of a heat-map query's time.
  if ((existing != nullptr) + operands.size() == 1) {
    const std::string_view only = existing ? *existing : operands[0];
    if (Status s = Histogram::Validate(only); !s.ok()) {
      return Status::Corruption((existing ? std::string("existing value: ") : "operand 0: ") + s.message());
    }
    out->assign(only);
    return Status::Ok();
  }
  Histogram sum;
  if (existing) {
    if (Status s = sum.MergeEncoded(*existing); !s.ok()) {
      return Status::Corruption("existing value: " + s.message());
    }
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (Status s = sum.MergeEncoded(operands[i]); !s.ok()) {
      return Status::Corruption("operand " + std::to_string(i) + ": " + s.message());
    }
  }
  *saturated = sum.saturated();
  out->clear();
  sum.EncodeTo(out);
  return Status::Ok();
}

}  // namespace trailmap::aggregator
