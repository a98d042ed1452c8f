// What store.cc and store_backfill.cc share inside the Store: its RocksDB handles and the small
// conversions between RocksDB's types and ours. Not for other files.
#pragma once

#include <rocksdb/db.h>

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "aggregator/store/keys.h"
#include "aggregator/store/store.h"
#include "core/status.h"

namespace trailmap::aggregator {

struct Store::Handles {
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> all;  // owned: destroyed before the DB closes
  // By resolution, in kHistogramResolutions order: hist, hist_10s, hist_60s, hist_600s.
  std::array<rocksdb::ColumnFamilyHandle*, kHistogramResolutionCount> hist{};
  rocksdb::ColumnFamilyHandle* scalar = nullptr;
  rocksdb::ColumnFamilyHandle* meta = nullptr;
  rocksdb::ColumnFamilyHandle* stacks = nullptr;
  rocksdb::ColumnFamilyHandle* stacks_60s = nullptr;

  rocksdb::ColumnFamilyHandle* Named(std::string_view name) const {
    for (rocksdb::ColumnFamilyHandle* h : all) {
      if (h->GetName() == name) return h;
    }
    return nullptr;
  }

  ~Handles() {
    if (!db) return;
    for (rocksdb::ColumnFamilyHandle* h : all) db->DestroyColumnFamilyHandle(h);
    db->Close().PermitUncheckedError();
  }
};

inline rocksdb::Slice AsSlice(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view View(const rocksdb::Slice& s) { return {s.data(), s.size()}; }

inline Status FromRocks(const rocksdb::Status& s, std::string_view what) {
  return Status::IOError(std::string(what) + ": " + s.ToString());
}

}  // namespace trailmap::aggregator
