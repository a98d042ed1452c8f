#include "ingest/replicated_shipper.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "core/log.h"

namespace trailmap {

std::vector<RoutedBatch> RouteBatch(const Cluster& cluster, Batch batch) {
  // Index of each second's epoch: EpochAt returns a reference into cluster.epochs.
  auto epoch_of = [&cluster](int64_t t) {
    return static_cast<size_t>(&cluster.EpochAt(t) - cluster.epochs.data());
  };
  const int64_t untimed = batch.sent_at_ms / 1000;
  if (batch.seconds.empty()) {
    std::vector<RoutedBatch> out;
    out.push_back({cluster.Owners(batch.host, untimed), std::move(batch)});
    return out;
  }
  const size_t first_epoch = epoch_of(batch.seconds.front().time);
  const bool one_epoch =
      std::all_of(batch.seconds.begin(), batch.seconds.end(),
                  [&](const SecondDelta& s) { return epoch_of(s.time) == first_epoch; });
  std::vector<RoutedBatch> out;
  if (one_epoch) {
    const int64_t t = batch.seconds.front().time;
    out.push_back({cluster.Owners(batch.host, t), std::move(batch)});
    return out;
  }
  // Rare (a membership change inside the batch): each part keeps the whole envelope, series list
  // and definitions, so it stands alone; the aggregator ignores what a part does not use.
  std::vector<SecondDelta> seconds = std::move(batch.seconds);
  batch.seconds.clear();
  std::vector<size_t> part_epochs;
  for (SecondDelta& second : seconds) {
    const size_t epoch = epoch_of(second.time);
    auto at = std::find(part_epochs.begin(), part_epochs.end(), epoch);
    if (at == part_epochs.end()) {
      part_epochs.push_back(epoch);
      out.push_back({cluster.Owners(batch.host, second.time), batch});
      out.back().batch.seconds.push_back(std::move(second));
    } else {
      out[static_cast<size_t>(at - part_epochs.begin())].batch.seconds.push_back(std::move(second));
    }
  }
  return out;
}

namespace {

// total.f += one.f for every field f listed.
template <typename Counters>
void AddFields(Counters& total, const Counters& one,
               std::initializer_list<uint64_t Counters::*> fields) {
  for (uint64_t Counters::*f : fields) total.*f += one.*f;
}

}  // namespace

ShipperCounters& operator+=(ShipperCounters& t, const ShipperCounters& c) {
  using C = ShipperCounters;
  AddFields(t, c,
            {&C::sent, &C::acked, &C::duplicates, &C::rejected, &C::items_refused, &C::unreadable,
             &C::resent, &C::reconnects, &C::dropped, &C::out_of_order, &C::incarnations,
             &C::need_dictionary, &C::stack_defs_sent, &C::frame_defs_sent, &C::retry_later,
             &C::handshake_failures, &C::unauthorized, &C::thread_failures});
  return t;
}

SpoolCounters& operator+=(SpoolCounters& t, const SpoolCounters& c) {
  using C = SpoolCounters;
  AddFields(
      t, c,
      {&C::bytes, &C::batches, &C::appended, &C::replayed, &C::dropped_batches, &C::dropped_bytes,
       &C::dropped_events, &C::truncated_bytes, &C::fsyncs, &C::held_in_memory});
  return t;
}

ReplicatedShipper::ReplicatedShipper(Cluster cluster, ShipperFactory factory)
    : factory_(std::move(factory)), cluster_(std::make_shared<const Cluster>(std::move(cluster))) {}

std::vector<size_t> ReplicatedShipper::SetCluster(Cluster next) {
  auto shared = std::make_shared<const Cluster>(std::move(next));
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<size_t> rekeyed;
  for (const auto& [member, shipper] : shippers_) {
    if (member < cluster_->members.size() && member < shared->members.size() &&
        cluster_->members[member].server_key != shared->members[member].server_key) {
      rekeyed.push_back(member);
    }
  }
  cluster_ = std::move(shared);
  return rekeyed;
}

void ReplicatedShipper::Rekey(size_t member, CurveClient curve) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = shippers_.find(member);
  if (it != shippers_.end()) it->second->SetCurve(std::move(curve));
}

std::shared_ptr<const Cluster> ReplicatedShipper::cluster() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cluster_;
}

void ReplicatedShipper::Adopt(size_t member, std::unique_ptr<Shipper> shipper) {
  std::lock_guard<std::mutex> lock(mu_);
  shippers_[member] = std::move(shipper);
}

Shipper* ReplicatedShipper::ShipperOf(size_t member) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = shippers_.find(member);
  if (it != shippers_.end()) return it->second.get();
  const ClusterMember& named = cluster_->members[member];
  Result<std::unique_ptr<Shipper>> made = factory_(named);
  if (!made.ok()) {
    // Not kept: the next batch tries again (a spool directory may become writable). Logged once
    // until it works, not once per batch.
    if (failing_.insert(member).second) {
      Log("owner " + named.name + ": " + made.status().ToString() +
          "; its copies are not sent until this is fixed (tried again with every batch)");
    }
    return nullptr;
  }
  if (failing_.erase(member) > 0) Log("owner " + named.name + ": shipping again");
  return shippers_.emplace(member, std::move(*made)).first->second.get();
}

bool ReplicatedShipper::Send(Batch batch) {
  bool all = true;
  for (RoutedBatch& part : RouteBatch(*cluster(), std::move(batch))) {
    for (size_t i = 0; i < part.owners.size(); ++i) {
      Shipper* shipper = ShipperOf(part.owners[i]);
      if (shipper == nullptr) {
        all = false;
        continue;
      }
      // The last owner takes the part itself; the others a copy.
      const bool last = i + 1 == part.owners.size();
      all = shipper->Send(last ? std::move(part.batch) : part.batch) && all;
    }
  }
  return all;
}

Status ReplicatedShipper::Flush(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::pair<size_t, Shipper*>> shippers;
  const std::shared_ptr<const Cluster> cluster = this->cluster();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [member, shipper] : shippers_) shippers.emplace_back(member, shipper.get());
  }
  std::string waiting;
  for (auto& [member, shipper] : shippers) {
    const auto left = std::max(std::chrono::milliseconds(0),
                               std::chrono::duration_cast<std::chrono::milliseconds>(
                                   deadline - std::chrono::steady_clock::now()));
    if (Status s = shipper->Flush(left); !s.ok()) {
      waiting += (waiting.empty() ? "" : "; ") + cluster->members[member].name + ": " + s.message();
    }
  }
  if (!waiting.empty()) return Status::Unavailable(waiting);
  return Status::Ok();
}

std::vector<OwnerCounters> ReplicatedShipper::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<OwnerCounters> out;
  for (const auto& [member, shipper] : shippers_) {
    out.push_back({cluster_->members[member].name, shipper->counters(), shipper->spool_counters()});
  }
  return out;
}

ShipperCounters ReplicatedShipper::TotalCounters() const {
  ShipperCounters total;
  for (const OwnerCounters& c : counters()) total += c.shipper;
  return total;
}

SpoolCounters ReplicatedShipper::TotalSpoolCounters() const {
  SpoolCounters total;
  for (const OwnerCounters& c : counters()) total += c.spool;
  return total;
}

std::vector<std::string> ReplicatedShipper::members() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [member, shipper] : shippers_) out.push_back(cluster_->members[member].name);
  return out;
}

}  // namespace trailmap
