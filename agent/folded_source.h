// FoldedSource: stacks that applications (or other profilers) already folded, as StackSamples.
//
// Input, one line at a time (FlameGraph's folded format with two optional extras):
//
//   line   := [ '@' UNIX_SECONDS WS ] STACK WS COUNT
//           | '#fields' WS K=V{,K=V}     the fields of the lines after it, on this stream
//           | '#' anything               a comment
//           | blank                      (only spaces, tabs, '\r')
//   STACK  := FRAME { ';' FRAME }        root first; a frame may hold spaces, never ';' or '\n'
//   COUNT  := the text after the LAST run of spaces/tabs: a whole number from 1 to 2^40
//             (kMaxItemCount, core/counts.h: the most one line may carry)
//   WS     := spaces or tabs
//
// A line counts at the second it arrives (the agent's clock), or at UNIX_SECONDS when it starts
// with "@1700000000 ". Fields are the configured `fields`, then those of the stream's latest
// "#fields" line (same key: the line wins); a "#fields" line that is not valid (core/series.h
// rules) is rejected and the previous fields stay. Frames are cut to max_frame_bytes and stacks
// to max_depth frames (the leaf end dropped), both counted.
//
// Bad lines are rejected with a reason that names the stream and the line ("socket client 3
// line 7: count 'x' is not a whole number from 1 to 2^40"), counted (stats), the first
// kMaxLoggedErrors of each stream logged; the source and every other line go on. A line longer
// than max_line_bytes is rejected up to its newline.
//
// Where lines come from (any of them, together):
//   * `path`: a regular file read once from the start (`follow`: then kept open and polled
//     every poll_ms for appended lines, like tail -f; a file that shrank is read again from its
//     start), a FIFO (opened read-write so it never reaches end of file: writers come and go),
//     or "-" for standard input (read to its end).
//   * `socket`: a unix-domain stream socket this source listens on (a stale socket file at the
//     path is replaced; the file is removed on Stop). Any number of clients (up to max_clients
//     at once) connect and write lines; each connection is its own stream (own "#fields", own
//     line numbers); a last line without '\n' counts when the client closes.
//
// Everything runs on one Boost.Asio thread, which is where the sink is called from. Stop()
// closes every stream and joins; lines not yet read are lost.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/series.h"
#include "core/status.h"
#include "ingest/stack_sample.h"

namespace trailmap {

struct FoldedSourceOptions {
  std::string path;     // file, FIFO or "-"; "" = none
  bool follow = false;  // keep reading a regular file as it grows
  std::string socket;   // unix socket path to listen on; "" = none
  std::string metric = "app.stacks";
  FieldSet fields;  // added to every line, e.g. service=api
  size_t max_line_bytes = 1 << 20;
  size_t max_depth = 1000;        // frames per stack
  size_t max_frame_bytes = 1000;  // bytes per frame
  size_t max_clients = 256;       // socket connections at once; more are closed at once
  int64_t poll_ms = 200;          // follow: how often to look for appended lines
};

Status ValidateFoldedSourceOptions(const FoldedSourceOptions& options);

struct FoldedSourceStats {
  uint64_t lines = 0;             // lines read (all kinds)
  uint64_t samples = 0;           // StackSamples delivered
  uint64_t malformed = 0;         // lines rejected
  uint64_t over_count = 0;        // of which had a count past kMaxItemCount (2^40)
  uint64_t truncated_stacks = 0;  // cut to max_depth
  uint64_t truncated_frames = 0;  // cut to max_frame_bytes
  uint64_t clients = 0;           // socket connections accepted
  uint64_t clients_refused = 0;   // over max_clients
  uint64_t thread_failures = 0;   // unexpected errors its thread caught (logged; it goes on)
  bool path_done = false;         // `path` was read to its end (not with follow or a FIFO)
  std::vector<std::string> recent_errors;  // the latest kMaxRecentErrors rejections
  static constexpr size_t kMaxRecentErrors = 20;
  static constexpr size_t kMaxLoggedErrors = 5;  // per stream
};

// Parses folded lines of one stream. Exposed for tests; FoldedSource uses one per stream.
class FoldedLineParser {
 public:
  struct Parsed {
    bool ok = true;  // a sample or nothing (comment, blank, #fields)
    bool has_sample = false;
    StackSample sample;
    std::string error;        // when !ok: the reason, without the stream and line
    bool over_count = false;  // refused for a count past kMaxItemCount
    bool truncated_stack = false;
    uint64_t truncated_frames = 0;
  };
  FoldedLineParser(const FoldedSourceOptions& options, FieldSet base_fields);
  // One line (without its '\n'); now_second is used when the line has no "@" time.
  Parsed Parse(std::string_view line, int64_t now_second);

 private:
  const FoldedSourceOptions& options_;
  FieldSet base_;
  std::string fields_;  // canonical, base + the latest #fields
};

class FoldedSource {
 public:
  FoldedSource(FoldedSourceOptions options, StackSink sink);
  ~FoldedSource();  // Stop()
  FoldedSource(const FoldedSource&) = delete;
  FoldedSource& operator=(const FoldedSource&) = delete;

  // Opens the path and binds the socket (errors name which and why), then starts the thread.
  Status Start();
  void Stop();

  FoldedSourceStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trailmap
