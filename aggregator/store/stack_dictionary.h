// StackDictionaries: each agent id's frame and stack definitions (schemas/ingest.capnp, "Stacks
// are interned"), held in memory by the store's writer, and the global stack id each agent-local
// stack resolved to.
//
// Bounded: at most `max_agents` agent ids (the one unused the longest is evicted) and at most
// `max_entries_per_agent` frames plus stacks per agent id (past it that agent's dictionary is
// cleared before it learns more). Either way the agent's next batch that uses a forgotten id is
// answered `needDictionary` and comes again with every definition: eviction costs bytes, never
// data. Nothing here is persisted; a restarted aggregator starts empty.
//
// Not thread-safe: the Store calls it with its write lock held.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/batch.h"
#include "core/status.h"

namespace trailmap::aggregator {

// One agent id's definitions (internal to StackDictionaries).
struct AgentDictionary {
  struct Stack {
    std::vector<uint32_t> frames;
    uint32_t global = 0;  // 0 = not resolved yet
  };
  std::unordered_map<uint32_t, std::string> frames;
  std::unordered_map<uint32_t, Stack> stacks;
  uint64_t last_used = 0;
};

struct StackDictionaryOptions {
  size_t max_agents = 10'000;                // agent ids remembered
  size_t max_entries_per_agent = 4'000'000;  // frames + stacks of one agent id
};

class StackDictionaries {
 public:
  explicit StackDictionaries(StackDictionaryOptions options = {});

  // Remembers the definitions `batch` carries, for batch.agent. A redefined id takes its new
  // meaning (the agent never does that, but the newest word wins).
  void Learn(const Batch& batch);
  // Ok when every stack `batch` counts is known, with every frame of it; otherwise NotFound
  // naming the first unknown id ("stack 17 of web-1/ab12 is not known here").
  Status CheckKnown(const Batch& batch) const;
  // One agent's definitions, found once per batch (a handle into the dictionaries, valid until
  // the next Learn).
  class AgentView {
   public:
    // The folded text ("main;foo;bar") of a known stack; "" when unknown.
    std::string Folded(uint32_t stack) const;
    // The cached global id of a known stack (0 = not resolved yet); nullptr when unknown.
    uint32_t* GlobalId(uint32_t stack);
    bool known() const { return agent_ != nullptr; }

   private:
    friend class StackDictionaries;
    AgentDictionary* agent_ = nullptr;
  };
  AgentView Find(std::string_view agent);
  // Drops every cached global id (after a failed write took catalog entries back).
  void ForgetGlobalIds();

  size_t agent_count() const { return agents_.size(); }
  uint64_t evictions() const { return evictions_; }

 private:
  const AgentDictionary* FindAgent(std::string_view agent) const;
  void EvictOne();

  const StackDictionaryOptions options_;
  std::unordered_map<std::string, AgentDictionary> agents_;
  uint64_t tick_ = 0;
  uint64_t evictions_ = 0;
};

}  // namespace trailmap::aggregator
