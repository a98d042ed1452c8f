// ReplicatedShipper: sends every batch of a host to each of its owners in the cluster
// (core/cluster.h), each through a Shipper of its own.
//
// A host's owners for second t are Cluster::Owners(host, t). Each owner gets its own Shipper:
// its own ZeroMQ socket, agent id, sequence, window, ack timeout and spool, so an owner that is
// slow or down holds back only its own batches; they wait in its spool (hinted handoff at the
// edge) and replay when it returns. Nothing is ever sent to a member that does not own the
// host: with every owner down, the batches wait.
//
// A batch whose seconds fall in two epochs (a membership change) is split by epoch first
// (RouteBatch), so each second goes to the owners of the epoch that held then; data is never
// moved afterwards, so this is what lets a query find it (core/cluster.h).
//
// Shippers are created the first time a member is needed, by the factory the caller gives
// (the agent opens a spool segment per member, `trailmap import` and the load generator use an
// in-memory one), and are kept until the destructor. Adopt hands one in up front (the agent does
// so for every spool segment a previous run left, so it drains even if that member no longer
// owns the host).
//
// Threading: every method may be called from any thread; Send from one thread at a time keeps
// each owner's batches in the order given.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/cluster.h"
#include "core/status.h"
#include "ingest/shipper.h"

namespace trailmap {

// One part of a batch and the members that own it (indexes into Cluster::members).
struct RoutedBatch {
  std::vector<size_t> owners;
  Batch batch;
};

// Splits `batch` by the epoch each of its seconds falls in (parts in the order their first
// second appears; the envelope, series and definitions copied to each) and names each part's
// owners. A batch within one epoch (nearly always) comes back whole; one without seconds goes to
// the owners at sent_at_ms. Pure.
std::vector<RoutedBatch> RouteBatch(const Cluster& cluster, Batch batch);

// What one owner's shipper has done, for the agent's counters line.
struct OwnerCounters {
  std::string member;  // its name in the cluster
  ShipperCounters shipper;
  SpoolCounters spool;
};

// Builds the shipper of a member (the agent: with that member's spool segment).
using ShipperFactory = std::function<Result<std::unique_ptr<Shipper>>(const ClusterMember& member)>;

class ReplicatedShipper {
 public:
  ReplicatedShipper(Cluster cluster, ShipperFactory factory);
  ReplicatedShipper(const ReplicatedShipper&) = delete;
  ReplicatedShipper& operator=(const ReplicatedShipper&) = delete;

  // Uses `shipper` for member `member` (an index into cluster().members) from now on.
  void Adopt(size_t member, std::unique_ptr<Shipper> shipper);

  // Routes `batch` and queues each part on each of its owners' shippers (a copy each). False,
  // logged, when any owner could not take it (its shipper could not be created, or it could not
  // spool the batch); the other owners still have it.
  bool Send(Batch batch);

  // Blocks until every shipper has every batch acknowledged, or `timeout` passed for each
  // (they are waited on one after another, so each gets the rest of the time). Unavailable naming
  // the owners still waiting.
  Status Flush(std::chrono::milliseconds timeout);

  // Per owner, in the order of cluster().members; only members that have a shipper.
  std::vector<OwnerCounters> counters() const;
  // The sums over every owner.
  ShipperCounters TotalCounters() const;
  SpoolCounters TotalSpoolCounters() const;
  // Members that have a shipper, by name.
  std::vector<std::string> members() const;

  // Routes every batch sent from now on by `next` (the cluster file read again, SIGHUP), which
  // must keep every member of the current cluster at its index (CheckClusterReload does).
  // Returns the members (indexes) whose server key it changes and that have a shipper: the
  // caller hands each its new keys (Rekey); a shipper made from now on is made with `next`.
  std::vector<size_t> SetCluster(Cluster next);
  // Member `member`'s shipper connects with `curve` from now on (Shipper::SetCurve); nothing
  // when it has none.
  void Rekey(size_t member, CurveClient curve);
  // The cluster batches are routed by now.
  std::shared_ptr<const Cluster> cluster() const;

 private:
  // The shipper of member `member`, created on first use; nullptr (logged) if it cannot be.
  Shipper* ShipperOf(size_t member);

  const ShipperFactory factory_;
  mutable std::mutex mu_;
  std::shared_ptr<const Cluster> cluster_;  // guarded by mu_; replaced whole by SetCluster
  std::map<size_t, std::unique_ptr<Shipper>> shippers_;  // by member index; guarded by mu_
  std::set<size_t> failing_;  // members whose shipper could not be made (logged); mu_
};

// Sums of counters (every field), for totals over owners.
ShipperCounters& operator+=(ShipperCounters& total, const ShipperCounters& one);
SpoolCounters& operator+=(SpoolCounters& total, const SpoolCounters& one);

}  // namespace trailmap
