// ViewDocument: what running one view produced, for any front end to deliver: the bytes in the
// requested format, the shards that did not answer and remarks to show beside the document.
// The CLI writes the bytes to stdout or -o, the notes and the missing shards to stderr and exits
// 3 when a shard is missing; trailmap-query answers 200 or 206 with the bytes.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace trailmap {

struct ViewDocument {
  std::string bytes;
  std::string format;                // "json", "svg", "png", "ansi", "table", "csv", "folded"
  std::vector<std::string> missing;  // shards that did not answer: "tcp://host:port: reason"
  std::vector<std::string> notes;    // one line each, as the CLI prints them on stderr
  // Set instead of `bytes` by a view whose document is large, when the front end asked for it
  // (QueryContext::stream_documents, the CLI): writes the document to `emit` part by part as it
  // is made, so writing overlaps making it and its parts' memory is reused (1,000 trails as
  // JSON: 14 MB; docs/benchmarks-log.md, "The views at fleet scale").
  std::function<void(const std::function<void(std::string_view)>& emit)> stream;
};

// A note per member that did not answer but whose hosts came from their other replicas
// (Fetched::skipped): nothing is missing, and the user sees who is down.
inline void NoteSkipped(const std::vector<std::string>& skipped, ViewDocument* doc) {
  for (const std::string& s : skipped) doc->notes.push_back("trailmap: did not answer: " + s);
}

// A cell of a `--format table` document: `text` padded to `width`, then two spaces.
inline std::string PadCell(const std::string& text, size_t width) {
  return text + std::string(width - std::min(width, text.size()) + 2, ' ');
}

}  // namespace trailmap
