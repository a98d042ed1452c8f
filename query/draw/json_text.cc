#include "query/draw/json_text.h"

#include "core/batch.h"
#include "core/timespec.h"

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

void AddJsonHead(const JsonHead& head, nlohmann::ordered_json* j) {
  (*j)["view"] = head.view;
  (*j)["metric"] = head.metric;
  if (head.kind) (*j)["kind"] = MetricKindName(*head.kind);
  (*j)["unit"] = head.unit;
  if (head.group_by) (*j)["group_by"] = *head.group_by;
  (*j)["from"] = head.from;
  (*j)["to"] = head.to;
  if (head.rfc3339) {
    (*j)["from_rfc3339"] = FormatRfc3339(head.from);
    (*j)["to_rfc3339"] = FormatRfc3339(head.to);
  }
}

}  // namespace trailmap
