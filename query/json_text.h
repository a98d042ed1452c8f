// How the views write JSON for people: one key a line, and an array of arrays or objects one
// element a line, so a 50 × 1,000 grid stays readable and diffable without the one number a line
// that a plain pretty-print gives. Pure function.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace trailmap {

std::string DumpOneRowPerLine(const nlohmann::ordered_json& object);

}  // namespace trailmap
