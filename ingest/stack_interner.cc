#include "ingest/stack_interner.h"

#include <algorithm>
#include <cstring>

namespace trailmap {
namespace {

// A name the aggregator accepts; true when it had to be cut.
bool CleanFrame(std::string* name, size_t max_bytes) {
  for (char& c : *name) {
    if (c == ';') c = ':';
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  if (name->empty()) *name = "[unknown]";
  if (name->size() <= max_bytes) return false;
  size_t cut = max_bytes;
  // Do not leave half a UTF-8 sequence at the end.
  while (cut > 0 && (static_cast<unsigned char>((*name)[cut]) & 0xC0) == 0x80) --cut;
  name->resize(cut);
  return true;
}

}  // namespace

StackInterner::StackInterner(StackInternerOptions options)
    : options_(options),
      next_frame_(std::max<uint32_t>(1, options.first_frame_id)),
      next_stack_(std::max<uint32_t>(1, options.first_stack_id)) {}

uint32_t StackInterner::InternFrame(std::string name) {
  auto [it, added] = frame_ids_.emplace(std::move(name), next_frame_);
  if (added) frames_.emplace(next_frame_++, it->first);
  return it->second;
}

uint32_t StackInterner::Intern(const std::vector<std::string>& frames, uint64_t* truncated_frames,
                               bool* truncated_stack) {
  const size_t depth = std::max<size_t>(2, options_.max_depth);
  *truncated_stack = frames.size() > depth;
  const size_t keep = *truncated_stack ? depth - 1 : frames.size();
  std::vector<uint32_t> ids;
  ids.reserve(keep + 1);
  std::string name;
  for (size_t i = 0; i < keep; ++i) {
    name = frames[i];
    if (CleanFrame(&name, options_.max_frame_bytes)) ++*truncated_frames;
    ids.push_back(InternFrame(std::move(name)));
  }
  if (*truncated_stack) ids.push_back(InternFrame(kTruncatedFrame));
  if (ids.empty()) ids.push_back(InternFrame("[unknown]"));
  key_.assign(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(uint32_t));
  auto [it, added] = stack_ids_.emplace(key_, next_stack_);
  if (added) stacks_.emplace(next_stack_++, std::move(ids));
  return it->second;
}

void StackInterner::Define(const std::vector<uint32_t>& stacks, std::vector<StackDef>* stack_defs,
                           std::vector<FrameDef>* frame_defs) const {
  std::unordered_set<uint32_t> frames_done;
  for (uint32_t id : stacks) {
    auto it = stacks_.find(id);
    if (it == stacks_.end()) continue;
    stack_defs->push_back(StackDef{id, it->second});
    for (uint32_t f : it->second) {
      if (!frames_done.insert(f).second) continue;
      auto name = frames_.find(f);
      if (name != frames_.end()) frame_defs->push_back(FrameDef{f, name->second});
    }
  }
}

void StackInterner::Retain(const std::unordered_set<uint32_t>& keep) {
  std::unordered_set<uint32_t> used_frames;
  for (auto it = stacks_.begin(); it != stacks_.end();) {
    if (keep.count(it->first) == 0) {
      key_.assign(reinterpret_cast<const char*>(it->second.data()),
                  it->second.size() * sizeof(uint32_t));
      stack_ids_.erase(key_);
      it = stacks_.erase(it);
    } else {
      used_frames.insert(it->second.begin(), it->second.end());
      ++it;
    }
  }
  for (auto it = frames_.begin(); it != frames_.end();) {
    if (used_frames.count(it->first) == 0) {
      frame_ids_.erase(it->second);
      it = frames_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace trailmap
