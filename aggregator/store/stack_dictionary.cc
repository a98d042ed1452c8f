#include "aggregator/store/stack_dictionary.h"

namespace trailmap::aggregator {

StackDictionaries::StackDictionaries(StackDictionaryOptions options) : options_(options) {}

const AgentDictionary* StackDictionaries::FindAgent(std::string_view agent) const {
  auto it = agents_.find(std::string(agent));
  return it == agents_.end() ? nullptr : &it->second;
}

void StackDictionaries::EvictOne() {
  auto oldest = agents_.begin();
  for (auto it = agents_.begin(); it != agents_.end(); ++it) {
    if (it->second.last_used < oldest->second.last_used) oldest = it;
  }
  if (oldest != agents_.end()) {
    agents_.erase(oldest);
    ++evictions_;
  }
}

void StackDictionaries::Learn(const Batch& batch) {
  const bool uses_stacks = !batch.frames.empty() || !batch.stacks.empty();
  auto it = agents_.find(batch.agent);
  if (it == agents_.end()) {
    if (!uses_stacks) return;  // histogram-only agents take no room
    if (agents_.size() >= options_.max_agents) EvictOne();
    it = agents_.emplace(batch.agent, AgentDictionary{}).first;
  }
  AgentDictionary& a = it->second;
  a.last_used = ++tick_;
  if (!uses_stacks) return;
  if (a.frames.size() + a.stacks.size() + batch.frames.size() + batch.stacks.size() >
      options_.max_entries_per_agent) {
    a.frames.clear();
    a.stacks.clear();
    ++evictions_;
  }
  for (const FrameDef& f : batch.frames) {
    auto [slot, added] = a.frames.emplace(f.id, f.name);
    if (!added && slot->second != f.name) {
      slot->second = f.name;
      for (auto& [id, stack] : a.stacks) stack.global = 0;  // its stacks' text changed
    }
  }
  for (const StackDef& d : batch.stacks) {
    AgentDictionary::Stack& s = a.stacks[d.id];
    if (s.frames != d.frames) {
      s.frames = d.frames;
      s.global = 0;
    }
  }
}

Status StackDictionaries::CheckKnown(const Batch& batch) const {
  bool any = false;
  for (const SecondDelta& second : batch.seconds) any |= !second.stacks.empty();
  if (!any) return Status::Ok();
  const AgentDictionary* a = FindAgent(batch.agent);
  for (const SecondDelta& second : batch.seconds) {
    for (const StackCount& c : second.stacks) {
      const auto unknown = [&batch, &c] {
        return Status::NotFound("stack " + std::to_string(c.stack) + " of " + batch.agent +
                                " is not known here");
      };
      if (a == nullptr) return unknown();
      auto it = a->stacks.find(c.stack);
      if (it == a->stacks.end()) return unknown();
      if (it->second.global != 0) continue;
      for (uint32_t f : it->second.frames) {
        if (a->frames.count(f) == 0) {
          return Status::NotFound("frame " + std::to_string(f) + " of " + batch.agent +
                                  " is not known here");
        }
      }
    }
  }
  return Status::Ok();
}

StackDictionaries::AgentView StackDictionaries::Find(std::string_view agent) {
  AgentView view;
  auto it = agents_.find(std::string(agent));
  if (it != agents_.end()) view.agent_ = &it->second;
  return view;
}

std::string StackDictionaries::AgentView::Folded(uint32_t stack) const {
  if (agent_ == nullptr) return "";
  auto it = agent_->stacks.find(stack);
  if (it == agent_->stacks.end()) return "";
  std::string out;
  for (uint32_t f : it->second.frames) {
    auto name = agent_->frames.find(f);
    if (name == agent_->frames.end()) return "";
    if (!out.empty()) out.push_back(';');
    out.append(name->second);
  }
  return out;
}

uint32_t* StackDictionaries::AgentView::GlobalId(uint32_t stack) {
  if (agent_ == nullptr) return nullptr;
  auto it = agent_->stacks.find(stack);
  return it == agent_->stacks.end() ? nullptr : &it->second.global;
}

void StackDictionaries::ForgetGlobalIds() {
  for (auto& [name, agent] : agents_) {
    for (auto& [id, stack] : agent.stacks) stack.global = 0;
  }
}

}  // namespace trailmap::aggregator
