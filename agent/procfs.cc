#include "agent/procfs.h"

#include <charconv>

namespace trailmap::procfs {
namespace {

std::string Quote(std::string_view s) {
  if (s.size() > 40) return "'" + std::string(s.substr(0, 40)) + "...'";
  return "'" + std::string(s) + "'";
}

// Splits off the next whitespace-separated token of `*rest`; "" when there is none.
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view NextToken(std::string_view* rest) {
  size_t b = 0;
  while (b < rest->size() && IsSpace((*rest)[b])) ++b;
  size_t e = b;
  while (e < rest->size() && !IsSpace((*rest)[e])) ++e;
  std::string_view token = rest->substr(b, e - b);
  rest->remove_prefix(e);
  return token;
}

// The next line of `*rest` without its '\n'; false at the end.
bool NextLine(std::string_view* rest, std::string_view* line) {
  if (rest->empty()) return false;
  const size_t nl = rest->find('\n');
  *line = rest->substr(0, nl);
  rest->remove_prefix(nl == std::string_view::npos ? rest->size() : nl + 1);
  return true;
}

bool ToU64(std::string_view token, uint64_t* out) {
  if (token.empty()) return false;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), *out);
  return ec == std::errc() && end == token.data() + token.size();
}

Status BadNumber(std::string_view file, size_t line, std::string_view field,
                 std::string_view token) {
  return Status::InvalidArgument(
      std::string(file) + " line " + std::to_string(line) + ": field '" + std::string(field) +
      "': " + (token.empty() ? std::string("missing") : Quote(token) + " is not a number") +
      (token.size() > 19 ? " (or is past 2^64)" : ""));
}

// Reads the next token of `*rest` into `*out`, or says which field is wrong.
Status Take(std::string_view file, size_t line, std::string_view field, std::string_view* rest,
            uint64_t* out) {
  const std::string_view token = NextToken(rest);
  if (!ToU64(token, out)) return BadNumber(file, line, field, token);
  return Status::Ok();
}

}  // namespace

Result<CpuTimes> ParseProcStat(std::string_view text) {
  std::string_view rest = text, line;
  for (size_t n = 1; NextLine(&rest, &line); ++n) {
    if (NextToken(&line) != "cpu") continue;
    CpuTimes t;
    static constexpr const char* kNames[] = {"user",   "nice", "system",  "idle",
                                             "iowait", "irq",  "softirq", "steal"};
    uint64_t* fields[] = {&t.user,   &t.nice, &t.system,  &t.idle,
                          &t.iowait, &t.irq,  &t.softirq, &t.steal};
    for (size_t i = 0; i < 8; ++i) {
      const std::string_view token = NextToken(&line);
      if (token.empty() && i >= 4) break;  // a kernel before 2.6.11 stops after idle
      if (!ToU64(token, fields[i])) return BadNumber("/proc/stat", n, kNames[i], token);
    }
    return t;
  }
  return Status::InvalidArgument("/proc/stat: no 'cpu' line");
}

Result<PidStat> ParsePidStat(std::string_view text) {
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Status::InvalidArgument("/proc/PID/stat: no '(comm)' in " + Quote(text));
  }
  PidStat out;
  out.comm = std::string(text.substr(open + 1, close - open - 1));
  std::string_view rest = text.substr(close + 1);
  // Field 3 (state) is the first token after ')'; utime is field 14.
  uint64_t ignored = 0;
  if (NextToken(&rest).empty()) return BadNumber("/proc/PID/stat", 1, "state", "");
  for (int field = 4; field <= 24; ++field) {
    uint64_t* target = field == 14   ? &out.utime
                       : field == 15 ? &out.stime
                       : field == 20 ? &out.num_threads
                       : field == 22 ? &out.starttime
                       : field == 23 ? &out.vsize
                       : field == 24 ? &out.rss_pages
                                     : &ignored;
    const std::string_view token = NextToken(&rest);
    // Fields 4..13, 16..19 and 21 include signed ones (priority, nice, tty_nr); only their presence
    // matters here.
    if (target == &ignored) {
      if (token.empty())
        return BadNumber("/proc/PID/stat", 1, "field " + std::to_string(field), token);
      continue;
    }
    if (!ToU64(token, target)) {
      return BadNumber("/proc/PID/stat", 1, "field " + std::to_string(field), token);
    }
  }
  return out;
}

Result<SchedStat> ParsePidSchedstat(std::string_view text) {
  SchedStat s;
  std::string_view rest = text;
  if (Status st = Take("/proc/PID/schedstat", 1, "run_ns", &rest, &s.run_ns); !st.ok()) return st;
  if (Status st = Take("/proc/PID/schedstat", 1, "wait_ns", &rest, &s.wait_ns); !st.ok()) return st;
  if (Status st = Take("/proc/PID/schedstat", 1, "timeslices", &rest, &s.timeslices); !st.ok()) {
    return st;
  }
  return s;
}

Result<SchedStat> ParseHostSchedstat(std::string_view text) {
  SchedStat sum;
  bool any = false;
  std::string_view rest = text, line;
  for (size_t n = 1; NextLine(&rest, &line); ++n) {
    const std::string_view name = NextToken(&line);
    if (name.size() < 4 || name.substr(0, 3) != "cpu") continue;
    uint64_t v[9] = {};
    for (int i = 0; i < 9; ++i) {
      if (Status s = Take("/proc/schedstat", n, "field " + std::to_string(i + 1), &line, &v[i]);
          !s.ok()) {
        return s;
      }
    }
    sum.run_ns += v[6];
    sum.wait_ns += v[7];
    sum.timeslices += v[8];
    any = true;
  }
  if (!any) return Status::InvalidArgument("/proc/schedstat: no 'cpuN' line");
  return sum;
}

Result<PidIo> ParsePidIo(std::string_view text) {
  PidIo io;
  int seen = 0;
  std::string_view rest = text, line;
  for (size_t n = 1; NextLine(&rest, &line); ++n) {
    const std::string_view key = NextToken(&line);
    uint64_t* target = key == "rchar:"   ? &io.rchar
                       : key == "wchar:" ? &io.wchar
                       : key == "syscr:" ? &io.syscr
                       : key == "syscw:" ? &io.syscw
                                         : nullptr;
    if (target == nullptr) continue;
    if (Status s = Take("/proc/PID/io", n, key.substr(0, key.size() - 1), &line, target); !s.ok()) {
      return s;
    }
    ++seen;
  }
  if (seen < 4) return Status::InvalidArgument("/proc/PID/io: lacks rchar, wchar, syscr or syscw");
  return io;
}

Result<VmStat> ParseVmstat(std::string_view text) {
  VmStat vm;
  std::string_view rest = text, line;
  for (size_t n = 1; NextLine(&rest, &line); ++n) {
    const std::string_view key = NextToken(&line);
    uint64_t* target = nullptr;
    if (key == "pgmajfault") {
      target = &vm.pgmajfault;
    } else if (key == "pgscan_kswapd" || key == "pgscan_direct" || key == "pgscan_khugepaged" ||
               key == "pgscan_proactive") {
      target = &vm.pgscan;
    } else if (key == "pgsteal_kswapd" || key == "pgsteal_direct" || key == "pgsteal_khugepaged" ||
               key == "pgsteal_proactive") {
      target = &vm.pgsteal;
    } else {
      continue;
    }
    uint64_t v = 0;
    if (Status s = Take("/proc/vmstat", n, key, &line, &v); !s.ok()) return s;
    *target += v;
  }
  return vm;
}

Result<std::vector<NetDevice>> ParseNetDev(std::string_view text) {
  std::vector<NetDevice> out;
  std::string_view rest = text, line;
  for (size_t n = 1; NextLine(&rest, &line); ++n) {
    const size_t colon = line.find(':');
    if (n <= 2 || line.find_first_not_of(" \t") == std::string_view::npos) continue;  // headers
    if (colon == std::string_view::npos) {
      return Status::InvalidArgument("/proc/net/dev line " + std::to_string(n) +
                                     ": no 'name:' in " + Quote(line));
    }
    NetDevice d;
    std::string_view name = line.substr(0, colon);
    d.name = std::string(NextToken(&name));
    std::string_view values = line.substr(colon + 1);
    // rx: bytes packets errs drop fifo frame compressed multicast; tx: bytes packets ...
    uint64_t v[10] = {};
    static constexpr const char* kNames[] = {
        "rx bytes", "rx packets",    "rx errs",      "rx drop",  "rx fifo",
        "rx frame", "rx compressed", "rx multicast", "tx bytes", "tx packets"};
    for (int i = 0; i < 10; ++i) {
      if (Status s = Take("/proc/net/dev", n, kNames[i], &values, &v[i]); !s.ok()) return s;
    }
    d.rx_bytes = v[0];
    d.rx_packets = v[1];
    d.tx_bytes = v[8];
    d.tx_packets = v[9];
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::vector<DiskStat>> ParseDiskstats(std::string_view text) {
  std::vector<DiskStat> out;
  std::string_view rest = text, line;
  for (size_t n = 1; NextLine(&rest, &line); ++n) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    uint64_t major = 0, minor = 0;
    if (Status s = Take("/proc/diskstats", n, "major", &line, &major); !s.ok()) return s;
    if (Status s = Take("/proc/diskstats", n, "minor", &line, &minor); !s.ok()) return s;
    DiskStat d;
    d.name = std::string(NextToken(&line));
    if (d.name.empty()) return BadNumber("/proc/diskstats", n, "name", "");
    // 1 reads, 2 merged, 3 sectors read, 4 ms reading, 5 writes, 6 merged, 7 sectors written,
    // 8 ms writing, 9 in flight, 10 ms doing I/O (fields 4..13 of the line).
    uint64_t v[10] = {};
    for (int i = 0; i < 10; ++i) {
      if (Status s = Take("/proc/diskstats", n, "stat " + std::to_string(i + 1), &line, &v[i]);
          !s.ok()) {
        return s;
      }
    }
    d.reads = v[0];
    d.read_sectors = v[2];
    d.writes = v[4];
    d.write_sectors = v[6];
    d.io_ticks_ms = v[9];
    out.push_back(std::move(d));
  }
  return out;
}

bool IsWholeDisk(std::string_view name, const std::vector<DiskStat>& all) {
  for (std::string_view prefix : {"loop", "ram", "zram"}) {
    if (name.substr(0, prefix.size()) == prefix) return false;
  }
  for (const DiskStat& d : all) {
    if (d.name.size() >= name.size() || name.substr(0, d.name.size()) != d.name) continue;
    std::string_view suffix = name.substr(d.name.size());
    if (suffix.size() > 1 && suffix[0] == 'p') suffix.remove_prefix(1);
    if (!suffix.empty() && suffix.find_first_not_of("0123456789") == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

namespace {
// Decodes the \NNN octal escapes the kernel writes in mount paths.
std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
        s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out.push_back(
          static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}
}  // namespace

Result<std::vector<Mount>> ParseMounts(std::string_view text) {
  std::vector<Mount> out;
  std::string_view rest = text, line;
  for (size_t n = 1; NextLine(&rest, &line); ++n) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    Mount m;
    m.device = Unescape(NextToken(&line));
    m.dir = Unescape(NextToken(&line));
    m.fstype = std::string(NextToken(&line));
    if (m.fstype.empty()) {
      return Status::InvalidArgument("/proc/self/mounts line " + std::to_string(n) +
                                     ": want 'device dir fstype ...'");
    }
    out.push_back(std::move(m));
  }
  return out;
}

bool IsPseudoFilesystem(std::string_view fstype) {
  static constexpr std::string_view kPseudo[] = {
      "proc",         "sysfs",           "cgroup",    "cgroup2",   "devpts",     "devtmpfs",
      "tmpfs",        "mqueue",          "debugfs",   "tracefs",   "securityfs", "pstore",
      "bpf",          "configfs",        "fusectl",   "hugetlbfs", "autofs",     "binfmt_misc",
      "nsfs",         "rpc_pipefs",      "selinuxfs", "efivarfs",  "ramfs",      "squashfs",
      "overlay_none", "fuse.gvfsd-fuse", "rootfs",    "none"};
  for (std::string_view p : kPseudo) {
    if (fstype == p) return true;
  }
  return false;
}

CgroupPaths ParseProcCgroup(std::string_view text) {
  CgroupPaths out;
  std::string_view rest = text, line;
  while (NextLine(&rest, &line)) {
    const size_t c1 = line.find(':');
    const size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    const std::string_view path = line.substr(c2 + 1);
    if (line.substr(0, c1) == "0" && controllers.empty()) {
      out.unified = std::string(path);
      continue;
    }
    std::string_view list = controllers;
    while (!list.empty()) {
      const size_t comma = list.find(',');
      if (list.substr(0, comma) == "memory") out.memory = std::string(path);
      list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
    }
  }
  return out;
}

Result<std::optional<uint64_t>> ParseMemoryLimit(std::string_view text) {
  std::string_view rest = text;
  const std::string_view token = NextToken(&rest);
  const std::string_view t = token;
  if (t == "max") return std::optional<uint64_t>();
  uint64_t v = 0;
  if (!ToU64(t, &v)) return BadNumber("memory.max", 1, "limit", t);
  if (v >= (uint64_t{1} << 62)) return std::optional<uint64_t>();  // v1's "unlimited"
  return std::optional<uint64_t>(v);
}

std::string FieldSafeName(std::string_view name, size_t max_bytes) {
  std::string out(name.substr(0, max_bytes));
  for (char& c : out) {
    if (c < 0x21 || c > 0x7e || c == ',') c = '_';
  }
  if (out.empty()) out = "(none)";
  return out;
}

}  // namespace trailmap::procfs
