#include "aggregator/histogram_merge_operator.h"

#include <rocksdb/env.h>

#include <exception>

#include "core/histogram.h"

namespace trailmap::aggregator {
namespace {

std::string_view View(const rocksdb::Slice& s) { return {s.data(), s.size()}; }

// Runs the merge, catching everything; logs the reason to RocksDB's info log on failure.
template <typename Operands>
bool MergeOrFail(const rocksdb::Slice* existing, const Operands& operands, std::string* out,
                 rocksdb::Logger* logger) {
  try {
    std::vector<std::string_view> views;
    views.reserve(operands.size());
    for (const rocksdb::Slice& s : operands) views.push_back(View(s));
    const std::string_view existing_view = existing ? View(*existing) : std::string_view();
    Status s = MergeHistogramEncodings(existing ? &existing_view : nullptr, views, out);
    if (s.ok()) return true;
    if (logger) {
      rocksdb::Log(rocksdb::InfoLogLevel::ERROR_LEVEL, logger, "%s: merge failed: %s",
                   HistogramMergeOperator::kName, s.ToString().c_str());
    }
  } catch (const std::exception& e) {
    if (logger) {
      rocksdb::Log(rocksdb::InfoLogLevel::ERROR_LEVEL, logger, "%s: merge threw: %s",
                   HistogramMergeOperator::kName, e.what());
    }
  } catch (...) {
    if (logger) {
      rocksdb::Log(rocksdb::InfoLogLevel::ERROR_LEVEL, logger, "%s: merge threw",
                   HistogramMergeOperator::kName);
    }
  }
  return false;
}

}  // namespace

Status MergeHistogramEncodings(const std::string_view* existing,
                               const std::vector<std::string_view>& operands, std::string* out) {
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
  out->clear();
  sum.EncodeTo(out);
  return Status::Ok();
}

bool HistogramMergeOperator::FullMergeV2(const MergeOperationInput& in,
                                         MergeOperationOutput* out) const {
  return MergeOrFail(in.existing_value, in.operand_list, &out->new_value, in.logger);
}

bool HistogramMergeOperator::PartialMerge(const rocksdb::Slice& key, const rocksdb::Slice& left,
                                          const rocksdb::Slice& right, std::string* new_value,
                                          rocksdb::Logger* logger) const {
  try {
    const std::deque<rocksdb::Slice> operands{left, right};
    return MergeOrFail(nullptr, operands, new_value, logger);
  } catch (...) {
    return false;  // the deque could not be allocated; MergeOrFail catches the rest
  }
}

bool HistogramMergeOperator::PartialMergeMulti(const rocksdb::Slice& key,
                                               const std::deque<rocksdb::Slice>& operands,
                                               std::string* new_value,
                                               rocksdb::Logger* logger) const {
  return MergeOrFail(nullptr, operands, new_value, logger);
}

}  // namespace trailmap::aggregator
