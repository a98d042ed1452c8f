#include "query/json_text.h"

namespace trailmap {

std::string DumpOneRowPerLine(const nlohmann::ordered_json& object) {
  using json = nlohmann::ordered_json;
  std::string out = "{\n";
  size_t k = 0;
  for (const auto& [key, value] : object.items()) {
    out += "  " + json(key).dump() + ": ";
    if (value.is_array() && !value.empty() &&
        (value.front().is_array() || value.front().is_object())) {
      out += "[\n";
      for (size_t i = 0; i < value.size(); ++i) {
        out += "    " + value[i].dump() + (i + 1 < value.size() ? ",\n" : "\n");
      }
      out += "  ]";
    } else {
      out += value.dump();
    }
    out += ++k < object.size() ? ",\n" : "\n";
  }
  return out + "}\n";
}

}  // namespace trailmap
