#include "stacks/stack_collapse.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/counts.h"

namespace trailmap {
namespace {

// Perl's \s, \d and \w on bytes (no locale, no Unicode).
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsWord(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsLowerHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f'); }

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && IsSpace(s[i])) ++i;
  return i;
}
size_t SkipDigits(std::string_view s, size_t i) {
  while (i < s.size() && IsDigit(s[i])) ++i;
  return i;
}

struct EventFields {
  std::string_view comm, pid, tid;
};

// ^(\S.+?)\s+(\d+)\/*(\d+)*\s+ : the shortest COMM (two characters or more) that works.
bool MatchEventHead(std::string_view line, EventFields* out) {
  if (line.size() < 2 || IsSpace(line[0]) || line[0] == '\n') return false;
  for (size_t i = 2; i < line.size(); ++i) {
    if (line[i - 1] == '\n') return false;  // '.' does not match a newline
    if (!IsSpace(line[i])) continue;
    const size_t d1 = SkipSpace(line, i);
    const size_t d1_end = SkipDigits(line, d1);
    if (d1_end == d1) continue;
    size_t k = d1_end;
    while (k < line.size() && line[k] == '/') ++k;
    const size_t d2_end = SkipDigits(line, k);
    if (d2_end < line.size() && IsSpace(line[d2_end])) {
      out->comm = line.substr(0, i);
      out->pid = line.substr(d1, d1_end - d1);
      out->tid = line.substr(k, d2_end - k);
      return true;
    }
    // With the slashes given back, \s+ would have to match at a '/' or digit: no match here.
  }
  return false;
}

// :\s*(\d+)*\s+(\S+):\s*$ at the leftmost colon where it matches.
bool MatchEventTail(std::string_view line, std::string_view* period, std::string_view* event) {
  size_t last = line.size();
  while (last > 0 && IsSpace(line[last - 1])) --last;  // one past the last non-space
  // The token is the last run of non-spaces and must end in ':' and be 2+ long.
  if (last < 2 || line[last - 1] != ':') return false;
  size_t token = last;
  while (token > 0 && !IsSpace(line[token - 1])) --token;
  if (last - token < 2) return false;
  for (size_t p = line.find(':'); p != std::string_view::npos && p < token;
       p = line.find(':', p + 1)) {
    const size_t r = p + 1;
    const size_t s1 = SkipSpace(line, r);
    const size_t digits_end = SkipDigits(line, s1);
    if (digits_end > s1 && digits_end < line.size() && IsSpace(line[digits_end]) &&
        SkipSpace(line, digits_end) == token) {
      *period = line.substr(s1, digits_end - s1);
      *event = line.substr(token, last - 1 - token);
      return true;
    }
    if (s1 > r && s1 == token) {
      *period = {};
      *event = line.substr(token, last - 1 - token);
      return true;
    }
  }
  return false;
}

struct FrameFields {
  std::string_view pc, rawfunc, module;
};

// ^\s*(\w+)\s*(.+) \((.*)\) : MODULE runs to the last ')' of the line, and SYMBOL to the last
// " (" before that ')'.
bool MatchFrame(std::string_view line, FrameFields* out) {
  const size_t a = SkipSpace(line, 0);
  size_t w_end = a;
  while (w_end < line.size() && IsWord(line[w_end])) ++w_end;
  if (w_end == a) return false;
  const size_t close = line.rfind(')');
  if (close == std::string_view::npos || close < 2) return false;
  const size_t q = line.rfind(" (", close - 2);
  if (q == std::string_view::npos || q < a + 2) return false;  // PC and SYMBOL need a byte each
  size_t pc_end, s;
  if (q >= w_end + 1) {
    pc_end = w_end;
    s = std::min(SkipSpace(line, w_end), q - 1);
  } else {
    pc_end = q - 1;  // \w+ gives back characters until .+ has one
    s = q - 1;
  }
  out->pc = line.substr(a, pc_end - a);
  out->rawfunc = line.substr(s, q - s);
  out->module = line.substr(q + 2, close - (q + 2));
  return true;
}

// /tmp/perf-\d+\.map
bool IsPerfMap(std::string_view module) {
  for (size_t p = module.find("/tmp/perf-"); p != std::string_view::npos;
       p = module.find("/tmp/perf-", p + 1)) {
    const size_t d = p + 10;
    const size_t e = SkipDigits(module, d);
    if (e > d && module.substr(e, 4) == ".map") return true;
  }
  return false;
}

bool IsKernelModule(std::string_view module) {
  return (module.starts_with('[') || module.ends_with("vmlinux")) &&
         module.find("unknown") == std::string_view::npos;
}

uint64_t ParseCount(std::string_view digits) {
  uint64_t v = 0;
  for (char c : digits) {
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return UINT64_MAX;
    v = v * 10 + d;
  }
  return v;
}

// The first token after `from` shaped "DIGITS.DIGITS:" (perf script's TIME), in nanoseconds.
bool FindTime(std::string_view line, size_t from, int64_t* time_ns) {
  size_t i = from;
  while (i < line.size()) {
    i = SkipSpace(line, i);
    size_t end = i;
    while (end < line.size() && !IsSpace(line[end])) ++end;
    const std::string_view token = line.substr(i, end - i);
    i = end;
    if (token.size() < 4 || token.back() != ':') continue;
    const size_t dot = token.find('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 2 > token.size() - 1) continue;
    const std::string_view whole = token.substr(0, dot);
    const std::string_view frac = token.substr(dot + 1, token.size() - 2 - dot);
    if (SkipDigits(whole, 0) != whole.size() || SkipDigits(frac, 0) != frac.size()) continue;
    if (whole.size() > 10) return false;
    int64_t ns = 0;
    for (char c : whole) ns = ns * 10 + (c - '0');
    // Past 2262-04-11 the time has no int64 nanoseconds (ten digits would overflow; found by
    // fuzz/perf_script_fuzz): no TIME, as for any other malformed token.
    if (ns > INT64_MAX / 1'000'000'000 - 1) return false;
    int64_t f = 0;
    for (size_t k = 0; k < 9; ++k) f = f * 10 + (k < frac.size() ? frac[k] - '0' : 0);
    *time_ns = ns * 1'000'000'000 + f;
    return true;
  }
  return false;
}

}  // namespace

StackCollapser::StackCollapser(CollapseOptions options) : options_(options) {}

void StackCollapser::Add(std::string_view text) {
  while (!text.empty()) {
    const void* nl = memchr(text.data(), '\n', text.size());
    if (nl == nullptr) {
      partial_.append(text);
      return;
    }
    const size_t n = static_cast<size_t>(static_cast<const char*>(nl) - text.data());
    if (partial_.empty()) {
      AddLine(text.substr(0, n));
    } else {
      partial_.append(text.substr(0, n));
      std::string line = std::move(partial_);
      partial_.clear();
      AddLine(line);
    }
    text.remove_prefix(n + 1);
  }
}

void StackCollapser::AddLine(std::string_view line) {
  ++stats_.lines;
  if (!line.empty() && line[0] == '#') return;
  if (line.empty()) {
    EndRecord();
    return;
  }
  if (ParseEventLine(line)) return;
  FrameFields frame;
  if (MatchFrame(line, &frame)) {
    if (!in_record_) return;  // a frame of a skipped record
    std::string_view raw = frame.rawfunc;
    if (const size_t plus = raw.rfind("+0x");
        plus != std::string_view::npos && plus + 3 < raw.size() &&
        std::all_of(raw.begin() + plus + 3, raw.end(), IsLowerHex)) {
      raw = raw.substr(0, plus);
    }
    if (!raw.empty() && raw[0] == '(') return;  // a process name, not a function
    // Split on "->" (an inlined chain), dropping trailing empty pieces as Perl's split does.
    std::vector<std::string_view> pieces;
    for (size_t start = 0;;) {
      const size_t arrow = raw.find("->", start);
      pieces.push_back(raw.substr(start, arrow == std::string_view::npos ? arrow : arrow - start));
      if (arrow == std::string_view::npos) break;
      start = arrow + 2;
    }
    while (!pieces.empty() && pieces.back().empty()) pieces.pop_back();
    // Frames are kept leaf first; a chain a->b reads outermost first, so push it reversed.
    for (size_t i = pieces.size(); i-- > 0;) {
      AddFunction(pieces[i], frame.module, frame.pc, i > 0);
    }
    return;
  }
  ++stats_.malformed_lines;
  if (stats_.malformed_examples.size() < CollapseStats::kMaxExamples) {
    stats_.malformed_examples.push_back({stats_.lines, std::string(line.substr(0, 200))});
  }
}

bool StackCollapser::ParseEventLine(std::string_view line) {
  EventFields f;
  if (!MatchEventHead(line, &f)) return false;
  std::string_view pid = f.pid, tid = f.tid;
  if (tid.empty() || tid == "0") {
    tid = pid;
    pid = "?";
  }
  std::string_view period, event;
  if (MatchEventTail(line, &period, &event)) {
    if (!event_chosen_) {
      event_chosen_ = true;
      stats_.event = std::string(event);
    } else if (event != stats_.event) {
      ++stats_.other_event_records;
      if (std::find(stats_.other_events.begin(), stats_.other_events.end(), event) ==
          stats_.other_events.end()) {
        stats_.other_events.emplace_back(event);
      }
      return true;  // like the Perl: the record's name stays unset, its frames are ignored
    }
  }
  // A PERIOD that reads as 0 ("0", but also "00": the Perl tests the string, so it would add
  // 0) counts 1, like an absent one: a record always counts (found by fuzz/perf_script_fuzz).
  period_ =
      options_.count_samples || period.empty() ? 1 : std::max<uint64_t>(ParseCount(period), 1);
  pname_.assign(f.comm);
  if (options_.include_tid) {
    pname_ += '-';
    pname_ += pid;
    pname_ += '/';
    pname_ += tid;
  } else if (options_.include_pid) {
    pname_ += '-';
    pname_ += pid;
  }
  std::replace(pname_.begin(), pname_.end(), ' ', '_');
  if (record_sink_) {
    comm_.assign(f.comm);
    pid_.assign(pid);
    tid_.assign(tid);
    const std::string_view rest_from = f.tid.empty() ? f.pid : f.tid;
    const size_t from = static_cast<size_t>(rest_from.data() + rest_from.size() - line.data());
    has_time_ = FindTime(line, from, &time_ns_);
    if (!has_time_) time_ns_ = 0;
  }
  in_record_ = true;
  return true;
}

void StackCollapser::AddFunction(std::string_view func, std::string_view module,
                                 std::string_view pc, bool inlined) {
  std::string& f = scratch_;
  if (func == "[unknown]") {
    std::string_view name = "unknown";
    if (module != "[unknown]") {
      name = module;
      if (const size_t slash = name.rfind('/'); slash != std::string_view::npos) {
        name.remove_prefix(slash + 1);
      }
    }
    f.assign("[");
    f += name;
    if (options_.include_addrs) {
      f += " <";
      f += pc;
      f += '>';
    }
    f += ']';
  } else {
    f.assign(func);
  }
  // Tidy, as the Perl's $tidy_generic.
  std::replace(f.begin(), f.end(), ';', ':');
  const size_t dot_paren = f.find(".(");
  const size_t paren_dot = f.rfind(").");
  const bool go_style = dot_paren != std::string::npos && paren_dot != std::string::npos &&
                        paren_dot >= dot_paren + 2;
  if (!go_style) {
    // s/\((?!anonymous namespace\)).*// : cut at the first '(' that does not open
    // "(anonymous namespace)".
    for (size_t paren = f.find('('); paren != std::string::npos; paren = f.find('(', paren + 1)) {
      if (std::string_view(f).substr(paren + 1).starts_with("anonymous namespace)")) continue;
      f.resize(paren);
      break;
    }
  }
  std::erase_if(f, [](char c) { return c == '"' || c == '\''; });
  // The Perl's $tidy_java applies when its process name is exactly "java": not to "javac", nor
  // to "java-PID" or "java-PID/TID" under --pid and --tid, whose JVM frames keep their 'L'.
  if (pname_ == "java" && f.starts_with('L') && f.find('/') != std::string::npos) {
    f.erase(0, 1);
  }

  if (inlined) {
    if (f.find("_[i]") == std::string::npos) f += "_[i]";
  } else if (options_.annotate_kernel && IsKernelModule(module)) {
    f += "_[k]";
  } else if (options_.annotate_jit && IsPerfMap(module)) {
    if (f.find("_[j]") == std::string::npos) f += "_[j]";
  }
  frames_.emplace_back(static_cast<uint32_t>(frame_text_.size()), static_cast<uint32_t>(f.size()));
  frame_text_ += f;
}

void StackCollapser::EndRecord() {
  if (!in_record_) return;
  if (record_sink_) {
    root_first_.clear();
    for (size_t i = frames_.size(); i-- > 0;) {
      root_first_.emplace_back(frame_text_.data() + frames_[i].first, frames_[i].second);
    }
    CollapsedRecord record;
    record.comm = comm_;
    record.pid = pid_;
    record.tid = tid_;
    record.has_time = has_time_;
    record.time_ns = time_ns_;
    record.period = period_;
    record.frames = &root_first_;
    ++stats_.records;
    record_sink_(record);
    frames_.clear();
    frame_text_.clear();
    in_record_ = false;
    return;
  }
  key_.assign(pname_);
  for (size_t i = frames_.size(); i-- > 0;) {
    key_ += ';';
    key_.append(frame_text_, frames_[i].first, frames_[i].second);
  }
  if (auto it = counts_.find(std::string_view(key_)); it != counts_.end()) {
    bool saturated = false;  // periods add up to at most kMaxTotalCount
    it->second = SaturatingCountAdd(it->second, period_, &saturated);
  } else {
    counts_.emplace(key_, std::min(period_, kMaxTotalCount));
  }
  ++stats_.records;
  frames_.clear();
  frame_text_.clear();
  in_record_ = false;
}

FoldedStacks StackCollapser::Finish() {
  if (!partial_.empty()) {
    std::string line = std::move(partial_);
    partial_.clear();
    AddLine(line);
  }
  if (in_record_) stats_.unterminated_record = true;
  in_record_ = false;
  frames_.clear();
  frame_text_.clear();
  FoldedStacks out;
  out.reserve(counts_.size());
  for (auto& [stack, count] : counts_) out.push_back({stack, count});
  counts_.clear();
  std::sort(out.begin(), out.end(),
            [](const FoldedStack& a, const FoldedStack& b) { return a.stack < b.stack; });
  return out;
}

FoldedStacks CollapsePerfScript(std::string_view text, const CollapseOptions& options,
                                CollapseStats* stats) {
  StackCollapser collapser(options);
  collapser.Add(text);
  FoldedStacks out = collapser.Finish();
  if (stats != nullptr) *stats = collapser.stats();
  return out;
}

}  // namespace trailmap
