// One line per event that matters, to stderr: "2026-11-22T16:40:00.123Z trailmap-agent: text".
// main() calls SetLogProgram once; Log is safe from any thread (one write(2) per line).
#pragma once

#include <string_view>

namespace trailmap {

void SetLogProgram(std::string_view name);
void Log(std::string_view line);

}  // namespace trailmap
