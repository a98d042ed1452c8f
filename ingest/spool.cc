#include "ingest/spool.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/failpoint.h"
#include "core/log.h"
#include "ingest/shipper.h"

namespace trailmap {
namespace {

enum RecordType : uint8_t { kHeader = 1, kBatch = 2, kDone = 3, kDropped = 4 };
constexpr size_t kRecordPrefix = 9;  // length, crc, type
constexpr size_t kBatchPrefix = 24;  // sequence, events, stack_high, frame_high

// CRC32C (Castagnoli), bytewise table: the spool writes a few batches a second.
uint32_t Crc32c(std::string_view data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0x82F63B78u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = ~0u;
  for (unsigned char b : data) crc = table[(crc ^ b) & 0xff] ^ (crc >> 8);
  return ~crc;
}

void PutFixed32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutFixed64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint32_t GetFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint64_t GetFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool ReadAt(int fd, uint64_t offset, size_t length, std::string* out) {
  out->resize(length);
  size_t got = 0;
  while (got < length) {
    const ssize_t n =
        ::pread(fd, out->data() + got, length - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

void SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::string HostOf(const std::string& agent_id) { return agent_id.substr(0, agent_id.rfind('/')); }

// "00000000000000000042.spool" -> 42; 0 for any other name.
uint64_t SegmentNumber(const std::string& name) {
  if (name.size() != 26 || name.substr(20) != ".spool") return 0;
  uint64_t n = 0;
  for (size_t i = 0; i < 20; ++i) {
    if (name[i] < '0' || name[i] > '9') return 0;
    n = n * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  return n;
}

}  // namespace

Result<SpoolFsync> ParseSpoolFsync(std::string_view text) {
  if (text == "always") return SpoolFsync::kAlways;
  if (text == "interval") return SpoolFsync::kInterval;
  if (text == "never") return SpoolFsync::kNever;
  return Status::InvalidArgument("spool fsync must be always, interval or never, got '" +
                                 std::string(text) + "'");
}

const char* SpoolFsyncName(SpoolFsync fsync) {
  switch (fsync) {
    case SpoolFsync::kAlways:
      return "always";
    case SpoolFsync::kInterval:
      return "interval";
    case SpoolFsync::kNever:
      return "never";
  }
  return "?";
}

Spool::Spool(SpoolOptions options) : options_(std::move(options)), memory_(options_.dir.empty()) {
  last_sync_ = std::chrono::steady_clock::now();
}

Spool::~Spool() {
  if (fd_ >= 0) {
    if (options_.fsync != SpoolFsync::kNever && unsynced_) ::fdatasync(fd_);
    ::close(fd_);
  }
  if (held_fd_ >= 0) ::close(held_fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

Result<std::unique_ptr<Spool>> Spool::Open(SpoolOptions options, std::string_view host,
                                           std::string_view agent_id) {
  if (options.segment_bytes == 0) {
    options.segment_bytes = std::clamp<uint64_t>(options.max_bytes / 16, 4096, 64 << 20);
  }
  std::unique_ptr<Spool> spool(new Spool(std::move(options)));
  if (Status s = spool->Load(host, agent_id); !s.ok()) return s;
  return spool;
}

std::string Spool::SegmentPath(uint64_t number) const {
  char name[32];
  std::snprintf(name, sizeof name, "%020llu.spool", static_cast<unsigned long long>(number));
  return options_.dir + "/" + name;
}

Status Spool::Load(std::string_view host, std::string_view agent_id) {
  if (memory_) {
    agent_id_ = agent_id.empty() ? NewAgentId(host) : std::string(agent_id);
    return Status::Ok();
  }
  const std::string& dir = options_.dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError("spool " + dir + ": cannot create it: " + ec.message());
  lock_fd_ = ::open((dir + "/LOCK").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return Status::IOError(Errno("spool " + dir + "/LOCK"));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return Status::Unavailable("spool " + dir +
                               " is in use by another trailmap-agent (its LOCK "
                               "is held); give each agent its own --spool directory");
  }
  std::vector<uint64_t> numbers;
  for (const auto& file : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = file.path().filename().string();
    if (name.size() > 4 && name.substr(name.size() - 4) == ".tmp") {
      std::filesystem::remove(file.path(), ec);  // an unfinished Renumber
    } else if (const uint64_t n = SegmentNumber(name); n > 0) {
      numbers.push_back(n);
    }
  }
  if (ec) return Status::IOError("spool " + dir + ": cannot list it: " + ec.message());
  std::sort(numbers.begin(), numbers.end());
  std::string stored_id;
  for (uint64_t number : numbers) {
    if (Status s = LoadSegment(number, &stored_id); !s.ok()) return s;
    if (segments_.back().bytes == 0) {  // not even a header: nothing in it can be used
      std::filesystem::remove(SegmentPath(number), ec);
      segments_.pop_back();
    }
  }
  for (const auto& [sequence, entry] : owed_) counters_.replayed += entry.dropped ? 0 : 1;
  counters_.batches = counters_.replayed;
  agent_id_ = !agent_id.empty() ? std::string(agent_id) : stored_id;
  const bool renamed = !stored_id.empty() && agent_id.empty() && HostOf(stored_id) != host;
  if (agent_id_.empty()) agent_id_ = NewAgentId(host);
  OpenHeld();
  if (Status s = StartSegment(segments_.empty() ? 1 : segments_.back().number + 1); !s.ok()) {
    return s;
  }
  if (renamed) {
    std::string id = NewAgentId(host);
    Log("spool " + dir + ": held by agent " + stored_id + " of another host name; continuing as " +
        id + " with its " + std::to_string(owed_.size()) + " batches renumbered from 1");
    if (Status s = Renumber(std::move(id)); !s.ok()) return s;
  }
  DeleteDoneSegments();
  if (!owed_.empty() || counters_.truncated_bytes > 0) {
    Log("spool " + dir + ": agent " + agent_id_ + ", " + std::to_string(counters_.replayed) +
        " batches from the last run to send again (" + std::to_string(Total()) +
        " bytes), next sequence " + std::to_string(next_sequence_));
  }
  return Status::Ok();
}

Status Spool::LoadSegment(uint64_t number, std::string* agent_id) {
  const std::string path = SegmentPath(number);
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Status::IOError(Errno("spool " + path));
  struct stat st {};
  ::fstat(fd, &st);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  segments_.push_back({number, 0, 0});
  uint64_t offset = 0;
  std::string prefix, record, problem;
  while (offset < size) {
    if (size - offset < kRecordPrefix || !ReadAt(fd, offset, 8, &prefix)) {
      problem = "a torn record prefix";
      break;
    }
    const uint32_t length = GetFixed32(prefix.data());
    if (length == 0 || length > size - offset - 8) {
      problem = "a record of " + std::to_string(length) + " bytes past the end of the file";
      break;
    }
    if (!ReadAt(fd, offset + 8, length, &record) ||
        Crc32c(record) != GetFixed32(prefix.data() + 4)) {
      problem = "a record whose checksum does not match";
      break;
    }
    const uint8_t type = static_cast<uint8_t>(record[0]);
    const char* body = record.data() + 1;
    const size_t body_size = length - 1;
    if ((type == kHeader) != (offset == 0) || (type == kHeader && body_size < 17) ||
        (type == kBatch && body_size < kBatchPrefix) || (type == kDone && body_size != 8) ||
        (type == kDropped && body_size != 16) || type < kHeader || type > kDropped) {
      problem = "a record of type " + std::to_string(type) + " and " + std::to_string(body_size) +
                " bytes that cannot be there";
      break;
    }
    if (type == kHeader) {
      std::string id(body + 16, body_size - 16);
      if (!agent_id->empty() && id != *agent_id) {
        // A Renumber finished writing this segment but not deleting the older ones: they are
        // obsolete (everything owed in them is in this one, renumbered).
        std::error_code ec;
        for (size_t i = 0; i + 1 < segments_.size(); ++i) {
          std::filesystem::remove(SegmentPath(segments_[i].number), ec);
        }
        segments_.erase(segments_.begin(), segments_.end() - 1);
        owed_.clear();
        next_sequence_ = 1;
      }
      *agent_id = std::move(id);
      next_sequence_ = std::max(next_sequence_, GetFixed64(body));
      stack_high_ = std::max(stack_high_, GetFixed32(body + 8));
      frame_high_ = std::max(frame_high_, GetFixed32(body + 12));
    } else if (type == kBatch) {
      const uint64_t sequence = GetFixed64(body);
      Entry& e = owed_[sequence];
      if (e.segment != 0) {
        for (Segment& s : segments_) s.live -= s.number == e.segment ? 1 : 0;
      }
      e = Entry{number,
                offset + 8 + 1 + kBatchPrefix,
                static_cast<uint32_t>(body_size - kBatchPrefix),
                GetFixed64(body + 8),
                false,
                ""};
      ++segments_.back().live;
      next_sequence_ = std::max(next_sequence_, sequence + 1);
      stack_high_ = std::max(stack_high_, GetFixed32(body + 16));
      frame_high_ = std::max(frame_high_, GetFixed32(body + 20));
    } else if (type == kDone) {
      auto it = owed_.find(GetFixed64(body));
      if (it != owed_.end()) {
        for (Segment& s : segments_) s.live -= s.number == it->second.segment ? 1 : 0;
        owed_.erase(it);
      }
    } else {  // kDropped: these are owed as empty batches, recorded here from now on
      const uint64_t first = GetFixed64(body), last = GetFixed64(body + 8);
      for (uint64_t sequence = first; sequence <= last && last - first < (uint64_t{1} << 32);
           ++sequence) {
        Entry& e = owed_[sequence];
        if (e.segment != 0) {
          for (Segment& s : segments_) s.live -= s.number == e.segment ? 1 : 0;
        }
        e = Entry{number, 0, 0, 0, true, ""};
        ++segments_.back().live;
        next_sequence_ = std::max(next_sequence_, sequence + 1);
      }
    }
    offset += 8 + length;
  }
  if (!problem.empty()) {
    Log("spool " + path + ": " + problem + " at offset " + std::to_string(offset) +
        " (a write cut short by a crash, or a damaged disk); truncating the " +
        std::to_string(size - offset) + " bytes from there");
    counters_.truncated_bytes += size - offset;
    if (::ftruncate(fd, static_cast<off_t>(offset)) != 0) {
      Log(Errno("spool " + path + ": truncate"));
    }
  }
  ::close(fd);
  segments_.back().bytes = offset;
  return Status::Ok();
}

Status Spool::StartSegment(uint64_t number) {
  const std::string path = SegmentPath(number);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError(Errno("spool " + path));
  if (fd_ >= 0) {
    if (options_.fsync != SpoolFsync::kNever && unsynced_) ::fdatasync(fd_);
    ::close(fd_);
  }
  fd_ = fd;
  segments_.push_back({number, 0, 0});
  uint64_t offset = 0;
  if (Status s = Write(kHeader, SegmentHeader(), &offset); !s.ok()) return s;
  if (options_.fsync != SpoolFsync::kNever) {
    if (Status s = Sync(); !s.ok()) return s;
    SyncDir(options_.dir);
  }
  return Status::Ok();
}

std::string Spool::SegmentHeader() const {
  std::string header;
  PutFixed64(&header, next_sequence_);
  PutFixed32(&header, stack_high_);
  PutFixed32(&header, frame_high_);
  header += agent_id_;
  return header;
}

Status Spool::Write(uint8_t type, std::string_view body, uint64_t* offset) {
  std::string record;
  record.reserve(kRecordPrefix + body.size());
  record.resize(8);
  record.push_back(static_cast<char>(type));
  record.append(body);
  const std::string_view covered(record.data() + 8, record.size() - 8);
  std::string prefix;
  PutFixed32(&prefix, static_cast<uint32_t>(covered.size()));
  PutFixed32(&prefix, Crc32c(covered));
  std::memcpy(record.data(), prefix.data(), 8);
  Segment& segment = segments_.back();
  if (!WriteAll(fd_, record)) {
    const Status s = Status::IOError(Errno("spool " + SegmentPath(segment.number) + ": write"));
    // Leave no torn record behind: the next append starts where this one did.
    if (::ftruncate(fd_, static_cast<off_t>(segment.bytes)) != 0) Log(Errno("spool: truncate"));
    return s;
  }
  *offset = segment.bytes + kRecordPrefix;
  segment.bytes += record.size();
  unsynced_ = true;
  return Status::Ok();
}

void Spool::OpenHeld() {
  constexpr off_t kHeldBytes = 4096;
  const std::string path = options_.dir + "/HELD";
  held_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (held_fd_ < 0) {
    Log(Errno("spool " + path) + " (a kill -9 while the disk refuses batches may then reuse " +
        "their sequences)");
    return;
  }
  std::string prefix, body;
  if (ReadAt(held_fd_, 0, 8, &prefix)) {
    const uint32_t length = GetFixed32(prefix.data());
    if (length >= 16 && length <= kHeldBytes - 8 && ReadAt(held_fd_, 8, length, &body) &&
        Crc32c(body) == GetFixed32(prefix.data() + 4) && body.substr(16) == agent_id_) {
      const uint64_t held_next = GetFixed64(body.data());
      if (held_next > next_sequence_) {
        Log("spool " + options_.dir + ": batches up to " + std::to_string(held_next - 1) +
            " were held in memory by the last run (the disk refused them); continuing above them");
      }
      next_sequence_ = std::max(next_sequence_, held_next);
      stack_high_ = std::max(stack_high_, GetFixed32(body.data() + 8));
      frame_high_ = std::max(frame_high_, GetFixed32(body.data() + 12));
    }
  }
  if (const int e = ::posix_fallocate(held_fd_, 0, kHeldBytes); e != 0) {
    Log("spool " + path + ": cannot allocate it: " + std::strerror(e));
  }
}

void Spool::WriteHeld() {
  if (held_fd_ < 0) return;
  std::string body, record;
  PutFixed64(&body, next_sequence_);
  PutFixed32(&body, stack_high_);
  PutFixed32(&body, frame_high_);
  body += agent_id_;
  PutFixed32(&record, static_cast<uint32_t>(body.size()));
  PutFixed32(&record, Crc32c(body));
  record += body;
  if (::pwrite(held_fd_, record.data(), record.size(), 0) != static_cast<ssize_t>(record.size())) {
    Log(Errno("spool " + options_.dir + "/HELD") +
        " (a kill -9 before these batches are acknowledged may reuse their sequences)");
  }
}

Status Spool::Sync() {
  if (fd_ < 0 || !unsynced_) return Status::Ok();
  if (::fdatasync(fd_) != 0) return Status::IOError(Errno("spool " + options_.dir + ": fdatasync"));
  ++counters_.fsyncs;
  unsynced_ = false;
  last_sync_ = std::chrono::steady_clock::now();
  return Status::Ok();
}

void Spool::SyncIfDue() {
  if (memory_ || options_.fsync != SpoolFsync::kInterval || !unsynced_) return;
  if (std::chrono::steady_clock::now() - last_sync_ < options_.fsync_interval) return;
  if (Status s = Sync(); !s.ok()) Log(s.ToString());
}

std::vector<SpooledBatch> Spool::Owed() const {
  std::vector<SpooledBatch> out;
  out.reserve(owed_.size());
  for (const auto& [sequence, entry] : owed_) out.push_back({sequence, entry.dropped});
  return out;
}

uint64_t Spool::Total() const {
  if (memory_) return memory_bytes_;
  uint64_t total = 0;
  for (const Segment& s : segments_) total += s.bytes;
  return total;
}

SpoolCounters Spool::counters() const {
  SpoolCounters c = counters_;
  c.bytes = Total();
  return c;
}

Status Spool::Append(uint64_t sequence, uint64_t events, uint32_t stack_high, uint32_t frame_high,
                     std::string_view batch, std::vector<uint64_t>* dropped) {
  const uint64_t need = memory_ ? batch.size() : kRecordPrefix + kBatchPrefix + batch.size();
  // Room for the record, and for a new segment's header and `dropped` records beside it.
  if (need + (memory_ ? 0 : 4096) > options_.max_bytes) {
    return Status::ResourceExhausted("a batch of " + std::to_string(batch.size()) +
                                     " bytes does not fit in a spool of " +
                                     std::to_string(options_.max_bytes) + " bytes (--spool-bytes)");
  }
  if (memory_) {
    for (auto it = owed_.begin(); memory_bytes_ + need > options_.max_bytes && it != owed_.end();
         ++it) {
      Entry& e = it->second;
      if (e.dropped) continue;
      memory_bytes_ -= e.memory.size();
      if (!dropping_) Log("spool (in memory): full; dropping the oldest batches");
      dropping_ = true;
      ++episode_batches_;
      episode_events_ += e.events;
      ++counters_.dropped_batches;
      counters_.dropped_bytes += e.memory.size();
      counters_.dropped_events += e.events;
      --counters_.batches;
      e.dropped = true;
      e.memory = std::string();
      dropped->push_back(it->first);
    }
    owed_[sequence] =
        Entry{0, 0, static_cast<uint32_t>(batch.size()), events, false, std::string(batch)};
    memory_bytes_ += need;
  } else if (Status s = AppendToDisk(sequence, events, stack_high, frame_high, batch, dropped);
             !s.ok()) {
    // The disk refused it (full, or failing): held in memory instead, within the same bound, so
    // it is still sent and acknowledged; only a kill -9 before its ack loses it.
    if (memory_bytes_ + batch.size() > options_.max_bytes) return s;
    if (!unwritable_) {
      Log(s.ToString() + "; holding batches in memory until the disk takes them again (lost if " +
          "the agent is killed before they are acknowledged)");
    }
    unwritable_ = true;
    owed_[sequence] =
        Entry{kInMemory, 0, static_cast<uint32_t>(batch.size()), events, false, std::string(batch)};
    memory_bytes_ += batch.size();
    ++counters_.held_in_memory;
  } else if (unwritable_) {
    unwritable_ = false;
    Log("spool " + options_.dir + ": writing again");
  }
  next_sequence_ = std::max(next_sequence_, sequence + 1);
  stack_high_ = std::max(stack_high_, stack_high);
  frame_high_ = std::max(frame_high_, frame_high);
  if (unwritable_) WriteHeld();  // this one is in memory: its sequence must outlive a kill -9
  ++counters_.appended;
  ++counters_.batches;
  if (memory_) return Status::Ok();
  if (options_.fsync == SpoolFsync::kAlways) return Sync();
  SyncIfDue();
  return Status::Ok();
}

Status Spool::AppendToDisk(uint64_t sequence, uint64_t events, uint32_t stack_high,
                           uint32_t frame_high, std::string_view batch,
                           std::vector<uint64_t>* dropped) {
  const uint64_t need = kRecordPrefix + kBatchPrefix + batch.size();
  if (TRAILMAP_FAILPOINT("spool.write")) {
    return Status::IOError("spool " + options_.dir + ": write: failpoint spool.write");
  }
  if (segments_.back().bytes >= options_.segment_bytes) {
    if (Status s = StartSegment(segments_.back().number + 1); !s.ok()) return s;
    DeleteDoneSegments();
  }
  while (Total() + need + 1024 > options_.max_bytes) {
    if (segments_.size() == 1) {  // only the current one: start another to drop this one
      if (Status s = StartSegment(segments_.back().number + 1); !s.ok()) return s;
    }
    if (Status s = DropOldest(dropped); !s.ok()) return s;
  }
  std::string body;
  body.reserve(kBatchPrefix + batch.size());
  PutFixed64(&body, sequence);
  PutFixed64(&body, events);
  PutFixed32(&body, stack_high);
  PutFixed32(&body, frame_high);
  body.append(batch);
  uint64_t offset = 0;
  if (Status s = Write(kBatch, body, &offset); !s.ok()) return s;
  owed_[sequence] = Entry{segments_.back().number,
                          offset + kBatchPrefix,
                          static_cast<uint32_t>(batch.size()),
                          events,
                          false,
                          ""};
  ++segments_.back().live;
  return Status::Ok();
}

Status Spool::DropOldest(std::vector<uint64_t>* dropped) {
  const Segment oldest = segments_.front();
  std::vector<uint64_t> moved;
  for (auto& [sequence, e] : owed_) {
    if (e.segment != oldest.number) continue;
    moved.push_back(sequence);
    if (e.dropped) continue;  // already an empty placeholder; it only moves
    ++counters_.dropped_batches;
    counters_.dropped_bytes += e.length;
    counters_.dropped_events += e.events;
    --counters_.batches;
    ++episode_batches_;
    episode_events_ += e.events;
    dropped->push_back(sequence);
  }
  if (!dropping_) {
    Log("spool " + options_.dir + ": full (" + std::to_string(Total()) + " of " +
        std::to_string(options_.max_bytes) + " bytes, --spool-bytes): dropping the oldest " +
        "batches (said once until it drains below 90%; counted as spool dropped_batches)");
    dropping_ = true;
  }
  // Record what is now owed empty, in runs, before the file that held the batches goes.
  for (size_t i = 0; i < moved.size();) {
    size_t j = i;
    while (j + 1 < moved.size() && moved[j + 1] == moved[j] + 1) ++j;
    std::string body;
    PutFixed64(&body, moved[i]);
    PutFixed64(&body, moved[j]);
    uint64_t offset = 0;
    if (Status s = Write(kDropped, body, &offset); !s.ok()) return s;
    i = j + 1;
  }
  for (uint64_t sequence : moved) {
    Entry& e = owed_[sequence];
    e = Entry{segments_.back().number, 0, 0, 0, true, ""};
    ++segments_.back().live;
  }
  if (options_.fsync != SpoolFsync::kNever) {
    if (Status s = Sync(); !s.ok()) return s;
  }
  std::error_code ec;
  std::filesystem::remove(SegmentPath(oldest.number), ec);
  if (ec) return Status::IOError("spool " + SegmentPath(oldest.number) + ": " + ec.message());
  segments_.pop_front();
  return Status::Ok();
}

void Spool::DeleteDoneSegments() {
  bool deleted = false;
  while (!memory_ && segments_.size() > 1 && segments_.front().live == 0) {
    std::error_code ec;
    std::filesystem::remove(SegmentPath(segments_.front().number), ec);
    if (ec) Log("spool " + SegmentPath(segments_.front().number) + ": " + ec.message());
    segments_.pop_front();
    deleted = true;
  }
  if (deleted && options_.fsync != SpoolFsync::kNever) SyncDir(options_.dir);
  NoteEpisodeEnd();
}

void Spool::NoteEpisodeEnd() {
  if (!dropping_ || Total() * 10 >= options_.max_bytes * 9) return;
  dropping_ = false;
  Log("spool " + (memory_ ? std::string("(in memory)") : options_.dir) + ": below 90% again; " +
      std::to_string(episode_batches_) + " batches (" + std::to_string(episode_events_) +
      " events) were dropped while it was full");
  episode_batches_ = episode_events_ = 0;
}

Result<std::string> Spool::Read(uint64_t sequence) const {
  auto it = owed_.find(sequence);
  if (it == owed_.end() || it->second.dropped) {
    return Status::NotFound("spool: batch " + std::to_string(sequence) + " is not held");
  }
  const Entry& e = it->second;
  if (memory_ || e.segment == kInMemory) return e.memory;
  const std::string path = SegmentPath(e.segment);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0 && TRAILMAP_FAILPOINT("spool.read")) {  // as when out of descriptors
    ::close(fd);
    fd = -1;
    errno = EMFILE;
  }
  if (fd < 0) {
    // Out of descriptors or memory: the batch is still there, and a later read will have it.
    if (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == EINTR) {
      return Status::Unavailable(Errno("spool " + path) + " (for now)");
    }
    return Status::IOError(Errno("spool " + path));
  }
  std::string out;
  const bool ok = ReadAt(fd, e.offset, e.length, &out);
  ::close(fd);
  if (!ok) return Status::IOError(Errno("spool " + path + ": batch " + std::to_string(sequence)));
  return out;
}

void Spool::Done(uint64_t sequence) {
  auto it = owed_.find(sequence);
  if (it == owed_.end()) return;
  const Entry& e = it->second;
  if (!e.dropped) --counters_.batches;
  if (memory_ || e.segment == kInMemory) {
    memory_bytes_ -= e.memory.size();
  } else {
    for (Segment& s : segments_) s.live -= s.number == e.segment ? 1 : 0;
    std::string body;
    PutFixed64(&body, sequence);
    uint64_t offset = 0;
    // Not synced: a lost `done` only sends the batch again, which the aggregator calls duplicate.
    // On a disk already known to refuse writes, not logged per ack.
    if (Status s = Write(kDone, body, &offset); !s.ok() && !unwritable_) Log(s.ToString());
  }
  owed_.erase(it);
  DeleteDoneSegments();
}

Status Spool::Renumber(std::string new_agent_id) {
  std::map<uint64_t, Entry> renumbered;
  uint64_t sequence = 0;
  if (memory_) {
    for (auto& [old, e] : owed_) renumbered.emplace(++sequence, std::move(e));
    owed_ = std::move(renumbered);
    agent_id_ = std::move(new_agent_id);
    next_sequence_ = sequence + 1;
    return Status::Ok();
  }
  // Everything owed goes into one new segment, written under a temporary name and renamed into
  // place when complete; Open takes a segment with a new agent id as the end of older ones.
  const uint64_t number = segments_.back().number + 1;
  const std::string path = SegmentPath(number), tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError(Errno("spool " + tmp));
  const int old_fd = fd_;
  const std::deque<Segment> old_segments = segments_;
  const std::string old_id = agent_id_;
  const uint64_t old_next = next_sequence_;
  fd_ = fd;
  segments_.push_back({number, 0, 0});
  agent_id_ = new_agent_id;
  next_sequence_ = owed_.size() + 1;
  Status status;
  uint64_t offset = 0;
  status = Write(kHeader, SegmentHeader(), &offset);
  for (auto it = owed_.begin(); status.ok() && it != owed_.end(); ++it) {
    Entry e = it->second;
    std::string body;
    PutFixed64(&body, ++sequence);
    if (e.dropped) {
      PutFixed64(&body, sequence);
      status = Write(kDropped, body, &offset);
    } else {
      Result<std::string> batch = Read(it->first);
      if (!batch.ok()) {
        status = batch.status();
        break;
      }
      PutFixed64(&body, e.events);
      PutFixed32(&body, stack_high_);
      PutFixed32(&body, frame_high_);
      body += *batch;
      status = Write(kBatch, body, &offset);
      e.offset = offset + kBatchPrefix;
      e.memory = std::string();  // one held in memory (the disk refused it) is on disk now
    }
    e.segment = number;
    renumbered.emplace(sequence, std::move(e));
  }
  if (status.ok() && ::fdatasync(fd_) != 0) status = Status::IOError(Errno("spool " + tmp));
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = Status::IOError(Errno("spool " + path));
  }
  if (!status.ok()) {
    ::close(fd_);
    ::unlink(tmp.c_str());
    fd_ = old_fd;
    segments_ = old_segments;
    agent_id_ = old_id;
    next_sequence_ = old_next;
    return status;
  }
  SyncDir(options_.dir);
  ::close(old_fd);
  std::error_code ec;
  for (const Segment& s : old_segments) std::filesystem::remove(SegmentPath(s.number), ec);
  segments_.erase(segments_.begin(), segments_.end() - 1);
  segments_.back().live = renumbered.size();
  owed_ = std::move(renumbered);
  memory_bytes_ = 0;
  unwritable_ = false;
  unsynced_ = false;
  return Status::Ok();
}

}  // namespace trailmap
