// Folds `perf script` text into stacks, line for line as FlameGraph's stackcollapse-perf.pl
// (its current master) does, so `trailmap collapse` prints byte for byte what that tool prints,
// under each of its options; stacks/testdata/collapse holds the inputs and the Perl's outputs that
// prove it (stack_collapse_golden_test.cc).
//
// Input grammar (one line at a time; a line is the text between '\n's):
//
//   comment  := '#' anything                 skipped
//   blank    := ''                           ends a record (a line of only spaces is NOT blank)
//   event    := COMM WS PID ['/'* TID] WS rest
//       COMM is the shortest run of at least two characters, the first not a space, after
//       which that pattern matches (Perl: ^(\S.+?)\s+(\d+)\/*(\d+)*\s+). With one number it is
//       the TID (perf's default output) and the PID is "?"; a TID of "0" counts as absent.
//       When the line ends in `: [PERIOD] EVENT:` (Perl: :\s*(\d+)*\s+(\S+):\s*$, leftmost
//       colon), EVENT is the event type and PERIOD (absent, or any run of zeros → 1) is what the
//       record counts.
//   frame    := WS* PC WS* SYMBOL ' (' MODULE ')' anything
//       PC is word characters, MODULE runs to the LAST ')' of the line and SYMBOL to the last
//       ' (' before it (Perl: ^\s*(\w+)\s*(.+) \((.*)\)); so "f (/opt/app (deleted))" is the
//       symbol "f (/opt/app" in the module "deleted", as in the Perl. Frames come leaf first.
//   anything else: a malformed line, skipped and counted (the Perl prints "Unrecognized line").
//
// Rules, in the order the Perl applies them:
//   * The first event type seen is the only one kept; records of other types are skipped and
//     counted (merging cycles with instructions would mislead). Lines without an event type are
//     always kept.
//   * A record is "COMM;outermost;...;leaf PERIOD". COMM becomes `comm-PID` with `pid`,
//     `comm-PID/TID` with `tid`; spaces in it become '_'.
//   * SYMBOL: a trailing "+0x<lowercase hex>" offset is dropped; a SYMBOL starting with '(' drops
//     the frame; "a->b" (inlined chain) gives frames a, b_[i] (the "_[i]" on every frame but the
//     first of the chain, once).
//   * "[unknown]" becomes "[MODULE basename]", or "[unknown]" when the module is unknown too;
//     with `include_addrs` the PC is kept: "[libc.so.6 <7f12ab>]", "[unknown <0>]".
//   * Tidy: ';' → ':'; unless the name looks like "foo.(bar)." (Go), everything from the first
//     '(' that does not open "(anonymous namespace)" is cut; then '"' and '\'' are removed.
//     Angle brackets stay ("Lfoo/Bar;::<init>", "std::vector<int>::push_back"). When the
//     process name is exactly "java" (so not "javac", nor "java-PID" or "java-PID/TID" under
//     `pid` and `tid`), a leading 'L' is dropped from names that still contain '/' (JVM
//     signatures "Ljava/lang/Thread;.run" → "java/lang/Thread:.run").
//   * Annotations: "_[k]" on kernel frames (MODULE starts with '[' or ends in "vmlinux", and
//     does not contain "unknown") with `annotate_kernel`; "_[j]" on JIT frames (MODULE contains
//     "/tmp/perf-<pid>.map": Java via perf-map-agent, node --perf-basic-prof) with
//     `annotate_jit`, unless already there. Inlined frames take "_[i]" and no other annotation.
//   * Output: one "stack count" line per distinct stack, sorted bytewise by stack.
//   * Like the Perl, a last record not followed by a blank line is not counted; it is reported
//     in CollapseStats so a caller can warn.
//   Where trailmap differs on purpose: a PERIOD of several zeros ("00") counts 1 (the Perl adds
//   0, since the string "00" is true), and counts saturate at core/counts.h's kMaxTotalCount
//   (2^62) where the Perl's floating-point sum would print 1.8e+19.
//
// Not supported: the Perl's --inline (runs addr2line on binaries), --context, --srcline and
// --event-filter options.
//
// Per-sample use (agent/perf_source): with SetRecordSink the collapser hands every record to a
// callback as it ends (the same rules as above, the same frames) instead of counting it, and
// also reads the sample's TIME column ("1700000000.123456:", the first token after PID/TID
// made of digits, '.', digits and a ':'); Finish() then returns no stacks but the stats.
//
// Thread safety: a StackCollapser is used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/folded.h"

namespace trailmap {

struct CollapseOptions {
  bool include_pid = false;      // --pid: "comm-PID"
  bool include_tid = false;      // --tid: "comm-PID/TID" (wins over include_pid)
  bool annotate_kernel = false;  // --kernel (or --all): "_[k]" on kernel frames
  bool annotate_jit = false;     // --jit (or --all): "_[j]" on /tmp/perf-PID.map frames
  bool include_addrs = false;    // --addrs: keep the PC of "[unknown]" frames
  // Count each record once instead of by its PERIOD (not a stackcollapse-perf option): stored
  // cpu.stacks count samples, as the agent's perf source does, whatever perf's period says.
  bool count_samples = false;
};

// What a run saw besides the stacks: what was dropped, and why.
struct CollapseStats {
  uint64_t lines = 0;
  uint64_t records = 0;                   // records that became (part of) a stack
  std::string event;                      // the event type kept; "" when lines had none
  uint64_t other_event_records = 0;       // records skipped for another event type
  std::vector<std::string> other_events;  // their types, first seen first
  uint64_t malformed_lines = 0;
  struct Malformed {
    uint64_t line_number = 0;  // 1-based
    std::string text;          // the line, cut at 200 bytes
  };
  std::vector<Malformed> malformed_examples;  // the first kMaxExamples
  bool unterminated_record = false;           // the text ended inside a record, which was dropped
  static constexpr size_t kMaxExamples = 5;
};

// One record as folded, for SetRecordSink. The views are valid during the call only.
struct CollapsedRecord {
  std::string_view comm;  // COMM as perf printed it (spaces kept, no pid)
  std::string_view pid;   // "?" when the line had only a TID
  std::string_view tid;
  bool has_time = false;  // the line had a TIME column
  int64_t time_ns = 0;    // TIME in nanoseconds (unix time with perf -k CLOCK_REALTIME)
  uint64_t period = 1;    // what the record counts (1 unless the line had a PERIOD)
  const std::vector<std::string_view>* frames = nullptr;  // folded names, root first, no COMM
};
using CollapsedRecordFn = std::function<void(const CollapsedRecord&)>;

class StackCollapser {
 public:
  explicit StackCollapser(CollapseOptions options = {});

  // From now on each record goes to `fn` when it ends instead of into the counts.
  void SetRecordSink(CollapsedRecordFn fn) { record_sink_ = std::move(fn); }

  // Feeds text in pieces of any size; a line may span pieces.
  void Add(std::string_view text);
  // Ends the input and returns the stacks, sorted. The collapser is then empty again.
  FoldedStacks Finish();
  const CollapseStats& stats() const { return stats_; }

 private:
  struct TransparentHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  void AddLine(std::string_view line);
  void EndRecord();
  bool ParseEventLine(std::string_view line);
  void AddFrameLine(std::string_view line);
  void AddFunction(std::string_view func, std::string_view module, std::string_view pc,
                   bool inlined);

  CollapseOptions options_;
  CollapseStats stats_;
  std::string partial_;  // an incomplete last line between Add calls

  // The record being read.
  bool in_record_ = false;  // Perl: $pname is set
  std::string pname_;
  uint64_t period_ = 1;
  std::string frame_text_;  // the frames' names, leaf first, back to back
  std::vector<std::pair<uint32_t, uint32_t>> frames_;  // (offset, length) in frame_text_
  std::string key_;
  std::string scratch_;
  bool event_chosen_ = false;

  // Per-record mode (SetRecordSink).
  CollapsedRecordFn record_sink_;
  std::string comm_, pid_, tid_;
  bool has_time_ = false;
  int64_t time_ns_ = 0;
  std::vector<std::string_view> root_first_;

  std::unordered_map<std::string, uint64_t, TransparentHash, std::equal_to<>> counts_;
};

// Convenience: the whole text at once.
FoldedStacks CollapsePerfScript(std::string_view text, const CollapseOptions& options,
                                CollapseStats* stats = nullptr);

}  // namespace trailmap
