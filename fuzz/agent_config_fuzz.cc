// The agent's TOML config (agent/agent_config.h ParseAgentConfig, then ValidateAgentConfig):
// any text. Property: a refusal says why; nothing crashes or hangs whatever toml++ hands back.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent/agent_config.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  trailmap::AgentConfig config;
  trailmap::Status s = trailmap::ParseAgentConfig(text, "fuzz.toml", &config);
  if (s.ok()) s = trailmap::ValidateAgentConfig(config);
  FUZZ_CHECK(s.ok() || !s.message().empty());
  return 0;
}
