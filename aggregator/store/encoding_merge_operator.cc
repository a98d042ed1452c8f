#include "aggregator/store/encoding_merge_operator.h"

#include <rocksdb/env.h>

#include <exception>

namespace trailmap::aggregator {
namespace {

std::string_view View(const rocksdb::Slice& s) { return {s.data(), s.size()}; }

}  // namespace

// Runs the merge, catching everything; logs the reason to RocksDB's info log on failure.
template <typename Operands>
bool EncodingMergeOperator::MergeOrFail(const rocksdb::Slice* existing, const Operands& operands,
                                        std::string* out, rocksdb::Logger* logger) const {
  try {
    std::vector<std::string_view> views;
    views.reserve(operands.size());
    for (const rocksdb::Slice& s : operands) views.push_back(View(s));
    const std::string_view existing_view = existing ? View(*existing) : std::string_view();
    bool saturated = false;
    Status s = merge_(existing ? &existing_view : nullptr, views, out, &saturated);
    if (s.ok()) {
      if (saturated) {
        if (counters_) counters_->saturated.fetch_add(1, std::memory_order_relaxed);
        if (logger) {
          rocksdb::Log(rocksdb::InfoLogLevel::WARN_LEVEL, logger,
                       "%s: a count passed 2^62 and was saturated", name_);
        }
      }
      return true;
    }
    if (logger) {
      rocksdb::Log(rocksdb::InfoLogLevel::ERROR_LEVEL, logger, "%s: merge failed: %s", name_,
                   s.ToString().c_str());
    }
  } catch (const std::exception& e) {
    if (logger) {
      rocksdb::Log(rocksdb::InfoLogLevel::ERROR_LEVEL, logger, "%s: merge threw: %s", name_,
                   e.what());
    }
  } catch (...) {
    if (logger) rocksdb::Log(rocksdb::InfoLogLevel::ERROR_LEVEL, logger, "%s: merge threw", name_);
  }
  return false;
}

// One value alone (every key written once that a query reads before compaction has rewritten it:
// the newest seconds) is its own merge once it decodes, handed back without a copy.
bool EncodingMergeOperator::FullMergeV2(const MergeOperationInput& in,
                                        MergeOperationOutput* out) const {
  if ((in.existing_value != nullptr) + in.operand_list.size() == 1) {
    const rocksdb::Slice& only = in.existing_value ? *in.existing_value : in.operand_list[0];
    try {
      if (validate_(View(only)).ok()) {
        out->existing_operand = only;
        return true;
      }
    } catch (...) {
    }  // MergeOrFail fails it and logs why
  }
  return MergeOrFail(in.existing_value, in.operand_list, &out->new_value, in.logger);
}

bool EncodingMergeOperator::PartialMerge(const rocksdb::Slice& key, const rocksdb::Slice& left,
                                         const rocksdb::Slice& right, std::string* new_value,
                                         rocksdb::Logger* logger) const {
  try {
    const std::deque<rocksdb::Slice> operands{left, right};
    return MergeOrFail(nullptr, operands, new_value, logger);
  } catch (...) {
    return false;  // the deque could not be allocated; MergeOrFail catches the rest
  }
}

bool EncodingMergeOperator::PartialMergeMulti(const rocksdb::Slice& key,
                                              const std::deque<rocksdb::Slice>& operands,
                                              std::string* new_value,
                                              rocksdb::Logger* logger) const {
  return MergeOrFail(nullptr, operands, new_value, logger);
}

}  // namespace trailmap::aggregator
