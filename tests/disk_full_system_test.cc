// Disk full under a real trailmap-aggregator: its data directory is on a small tmpfs
// this test mounts, and a filler file takes the rest of it. Batches go in over a raw DEALER, one
// at a time, as an agent's shipper sends them. What must hold:
//   - once the disk is full, a write fails with a clear log line and is NOT acked (the aggregator
//     says "background error" in its log and in its status answer);
//   - what is stored is exactly what was acked, while full, after space returns and after a
//     restart on the same data directory (RocksDB reopened);
//   - once the filler is removed, ingest resumes by itself (no restart): the batch that failed is
//     applied when resent, and every batch after it too.
// The aggregator refuses writes itself once less than store.min_free_mb is free (StoreOptions), so
// RocksDB never meets ENOSPC (Debian's RocksDB 7.8 asserts on a failed WAL append); the filler
// takes the disk below that reserve.
// It mounts a tmpfs: as root (or with CAP_SYS_ADMIN) directly; otherwise in a user and mount
// namespace of its own, where it is root and may mount a tmpfs that the aggregator it starts
// inherits. Where neither is allowed, it FAILS saying so; it never skips. (RLIMIT_FSIZE is no
// substitute here: the aggregator's guard reads the free space of the disk, which a file size
// limit does not lower, and Debian's RocksDB 7.8 asserts on a WAL append that fails.)
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <zmq.hpp>

#include "core/batch.h"
#include "core/histogram.h"
#include "core/query_wire.h"
#include "tests/cluster.h"
#include "tests/stored_events.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

constexpr int kSeries = 50;           // series per batch
constexpr int kValuesPerSeries = 4;   // values per series per batch
constexpr uint64_t kBatchCount = kSeries * kValuesPerSeries;

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Makes this process root of a new user namespace (the caller outside) with a mount namespace of
// its own; "" or why not. Must run while the process has one thread.
std::string EnterOwnUserNamespace() {
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
    return std::string("unshare(CLONE_NEWUSER | CLONE_NEWNS): ") + std::strerror(errno);
  }
  WriteFile("/proc/self/setgroups", "deny");
  WriteFile("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1");
  WriteFile("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1");
  return "";
}

// A tmpfs of `mib` MiB mounted at `path` for the test's lifetime; error() says why not.
class Tmpfs {
 public:
  Tmpfs(const std::string& path, int mib) : path_(path) {
    ::mkdir(path.c_str(), 0755);
    const std::string options = "size=" + std::to_string(mib) + "m";
    bool mounted = ::mount("tmpfs", path.c_str(), "tmpfs", 0, options.c_str()) == 0;
    if (!mounted && errno == EPERM) {
      if (std::string why = EnterOwnUserNamespace(); !why.empty()) {
        error_ = "not permitted, and no user namespace to mount in: " + why;
        return;
      }
      mounted = ::mount("tmpfs", path.c_str(), "tmpfs", 0, options.c_str()) == 0;
    }
    if (!mounted) {
      error_ = std::string("mount -t tmpfs -o ") + options + " tmpfs " + path + ": " +
               std::strerror(errno);
    }
  }
  ~Tmpfs() {
    if (error_.empty()) ::umount2(path_.c_str(), MNT_DETACH);
  }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  std::string error_;
};

// Writes 1 MiB blocks to `path` until the disk refuses; returns the errno that stopped it.
int FillDisk(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return errno;
  const std::string block(1 << 20, 'x');
  int error = 0;
  for (int i = 0; i < 4096 && error == 0; ++i) {
    ssize_t n = ::write(fd, block.data(), block.size());
    if (n < 0) error = errno;
    else if (n < static_cast<ssize_t>(block.size())) error = ENOSPC;
  }
  // Then byte by byte what is left of the last page.
  while (error == ENOSPC && ::write(fd, "x", 1) == 1) {
  }
  ::close(fd);
  return error;
}

// Batch `sequence` of agent full/1: kSeries series of one second, kValuesPerSeries values each.
Batch MakeFullBatch(uint64_t sequence, int64_t start) {
  Batch b;
  b.agent = "full/1";
  b.sequence = sequence;
  b.host = "db-1";
  for (int s = 0; s < kSeries; ++s) {
    b.series.push_back({"disk.latency", MetricKind::kLatency, "ns", "op=s" + std::to_string(s)});
  }
  SecondDelta second{start + static_cast<int64_t>(sequence % 300), {}, {}};
  for (int s = 0; s < kSeries; ++s) {
    Histogram h;
    for (int v = 0; v < kValuesPerSeries; ++v) h.Record(1000 + 37 * v + 101 * s + sequence);
    second.histograms.push_back({static_cast<uint32_t>(s), h.Encode()});
  }
  b.seconds.push_back(std::move(second));
  return b;
}

// One DEALER, one request at a time: the reply to `bytes`, or "" after `timeout`.
class Dealer {
 public:
  Dealer(zmq::context_t* context, const std::string& endpoint)
      : socket_(*context, zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    UseTestKeys(socket_);
    socket_.connect("tcp://" + endpoint);
  }
  std::string Exchange(const std::string& bytes, std::chrono::milliseconds timeout) {
    socket_.send(zmq::buffer(bytes), zmq::send_flags::none);
    return Receive(timeout);
  }
  std::string Receive(std::chrono::milliseconds timeout) {
    socket_.set(zmq::sockopt::rcvtimeo, static_cast<int>(timeout.count()));
    zmq::message_t reply;
    if (!socket_.recv(reply)) return "";
    return std::string(static_cast<const char*>(reply.data()), reply.size());
  }

 private:
  zmq::socket_t socket_;
};

// The ack of `sequence` among the replies to one send: applied, duplicate, or nothing.
std::optional<Ack> AckOf(Dealer* ingest, const Batch& batch, std::chrono::milliseconds timeout) {
  std::string reply = ingest->Exchange(EncodeBatch(batch), timeout);
  // Late replies to earlier sends of the same batch may come first; any of them will do.
  while (!reply.empty()) {
    Result<Ack> ack = DecodeAck(reply);
    if (ack.ok() && ack->sequence == batch.sequence) return *ack;
    reply = ingest->Receive(timeout);
  }
  return std::nullopt;
}

ShardStatus Status(zmq::context_t* context, const std::string& query_endpoint) {
  Dealer query(context, query_endpoint);
  Query q;
  q.id = 7;
  q.kind = Query::Kind::kStatus;
  Result<Answer> a = DecodeAnswer(query.Exchange(EncodeQuery(q), 10s));
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a.ok() && a->kind == Query::Kind::kStatus);
  return a.ok() ? a->status : ShardStatus{};
}

uint64_t StoredCount(const std::string& query_endpoint) {
  return StoredEvents(query_endpoint, "disk.latency", 1200);
}

TEST(DiskFullSystem, WritesFailUnackedAndIngestResumesWhenSpaceReturns) {
  TempDir dir;
  const std::string disk = dir / "disk";
  Tmpfs tmpfs(disk, 32);
  ASSERT_EQ(tmpfs.error(), "")
      << "this test makes a small disk with a tmpfs mount and cannot: " << tmpfs.error()
      << " (run it as root, with CAP_SYS_ADMIN, or where user namespaces are allowed: "
      << "sysctl user.max_user_namespaces; it does not skip)";

  const int ingest_port = FreePort(), query_port = FreePort();
  const std::string ingest = "127.0.0.1:" + std::to_string(ingest_port);
  const std::string query = "127.0.0.1:" + std::to_string(query_port);
  const std::string config = dir / "aggregator.toml";
  // Small memtables: RocksDB preallocates its WAL by the memtable size.
  WriteFile(config, "data = \"" + disk + "/data\"\ningest = \"" + ingest + "\"\nquery = \"" +
                        query + "\"\nname = \"agg-full\"\n[store]\nwrite_buffer_mb = 1\nmin_free_mb = 4\n");
  auto start = [&] {
    return std::make_unique<Process>(
        std::vector<std::string>{Binary("trailmap-aggregator"), "--config", config}, dir.path(),
        "agg-full");
  };
  std::unique_ptr<Process> aggregator = start();
  zmq::context_t context;
  auto ingest_socket = std::make_unique<Dealer>(&context, ingest);

  const int64_t t0 = Now() - 600;
  uint64_t sequence = 0, acked = 0;
  // Phase 1: room to spare, every batch applied.
  for (int i = 0; i < 100; ++i) {
    const Batch b = MakeFullBatch(++sequence, t0);
    std::optional<Ack> ack = AckOf(ingest_socket.get(), b, 10s);
    ASSERT_TRUE(ack && ack->status == Ack::Status::kApplied) << aggregator->Stderr();
    acked += kBatchCount;
  }
  EXPECT_EQ(StoredCount(query), acked);

  // Phase 2: the disk is full. Batches go in until one is not acked (the WAL had room left in
  // what RocksDB preallocated, so a few may still be written: those are acked, and counted).
  ASSERT_EQ(FillDisk(disk + "/filler"), ENOSPC);
  std::optional<Batch> refused;
  for (int i = 0; i < 5000 && !refused; ++i) {
    const Batch b = MakeFullBatch(++sequence, t0);
    std::optional<Ack> ack = AckOf(ingest_socket.get(), b, 3s);
    if (!ack) {
      refused = b;
      break;
    }
    ASSERT_EQ(ack->status, Ack::Status::kApplied) << ack->reason;
    acked += kBatchCount;
  }
  ASSERT_TRUE(refused) << "5000 batches written on a full disk?\n" << aggregator->Stderr();
  // Resent while still full: still not acked.
  EXPECT_FALSE(AckOf(ingest_socket.get(), *refused, 2s));
  EXPECT_TRUE(aggregator->Running());
  std::string log = aggregator->Stderr();
  EXPECT_NE(log.find("not written, not acked"), std::string::npos) << log;
  EXPECT_NE(log.find("disk full: "), std::string::npos) << log;
  ShardStatus status = Status(&context, query);
  EXPECT_NE(status.background_error.find("disk full"), std::string::npos) << status.background_error;
  // Reads go on, and say exactly what was acked.
  EXPECT_EQ(StoredCount(query), acked);

  // Phase 3: space returns. The refused batch, resent as a shipper does, is applied without a
  // restart; every batch after it too.
  ASSERT_EQ(::unlink((disk + "/filler").c_str()), 0);
  std::optional<Ack> ack;
  const bool resumed = WaitFor(
      [&] {
        ack = AckOf(ingest_socket.get(), *refused, 1s);
        return ack.has_value();
      },
      60s);
  ASSERT_TRUE(resumed) << "ingest did not resume after space returned\n" << aggregator->Stderr();
  ASSERT_EQ(ack->status, Ack::Status::kApplied) << ack->reason;
  acked += kBatchCount;
  for (int i = 0; i < 100; ++i) {
    const Batch b = MakeFullBatch(++sequence, t0);
    ack = AckOf(ingest_socket.get(), b, 10s);
    ASSERT_TRUE(ack && ack->status == Ack::Status::kApplied) << aggregator->Stderr();
    acked += kBatchCount;
  }
  // Every batch produced was acked exactly once, and is stored exactly once.
  EXPECT_EQ(acked, sequence * kBatchCount);
  EXPECT_EQ(StoredCount(query), acked);
  status = Status(&context, query);
  EXPECT_EQ(status.background_error, "");
  log = aggregator->Stderr();
  EXPECT_NE(log.find("disk space returned: "), std::string::npos) << log;

  // Phase 4: RocksDB reopened on the same directory holds exactly what was acked, and the
  // watermark: the last batch is a duplicate, the next one applies.
  aggregator->Kill(SIGTERM);
  ASSERT_EQ(aggregator->Wait(30s), 0) << aggregator->Stderr();
  ingest_socket.reset();
  aggregator = start();
  ingest_socket = std::make_unique<Dealer>(&context, ingest);
  ack = AckOf(ingest_socket.get(), MakeFullBatch(sequence, t0), 10s);
  ASSERT_TRUE(ack) << aggregator->Stderr();
  EXPECT_EQ(ack->status, Ack::Status::kDuplicate);
  EXPECT_EQ(StoredCount(query), acked);
  ack = AckOf(ingest_socket.get(), MakeFullBatch(++sequence, t0), 10s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->status, Ack::Status::kApplied);
  acked += kBatchCount;
  EXPECT_EQ(StoredCount(query), acked);
  aggregator->Kill(SIGTERM);
  EXPECT_EQ(aggregator->Wait(30s), 0);
}

}  // namespace
}  // namespace trailmap::test
