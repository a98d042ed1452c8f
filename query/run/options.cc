#include "query/run/options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/utf8.h"
#include "query/fetch/request_checks.h"
#include "query/fetch/view_request.h"

namespace trailmap {
namespace {

std::string Number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// What to give instead, after "--name VALUE: ".
std::string Hint(const OptionSpec& spec) {
  switch (spec.kind) {
    case OptionKind::kChoice: {
      std::string list;
      for (size_t i = 0; i < spec.choices.size(); ++i) {
        list += (i == 0 ? "" : i + 1 == spec.choices.size() ? " or " : ", ") + spec.choices[i];
      }
      return "give " + list;
    }
    case OptionKind::kFlag:
      return "give true or false";
    case OptionKind::kWhole:
      return "give a whole number from " + std::to_string(spec.whole_low) + " to " +
             std::to_string(spec.whole_high);
    case OptionKind::kNumber:
      if (spec.above_low) return "give a number above " + Number(spec.low);
      if (std::isfinite(spec.low) && std::isfinite(spec.high)) {
        return "give a number from " + Number(spec.low) + " to " + Number(spec.high);
      }
      if (std::isfinite(spec.low)) return "give a number, " + Number(spec.low) + " or more";
      return "give a number";
    case OptionKind::kText:
      break;
  }
  return "";
}

// What the user typed, as it is when it is printable UTF-8 ("été"), else escaped (Printable).
std::string Shown(std::string_view text) {
  bool plain = IsValidUtf8(text) && text.size() <= 64;
  for (unsigned char c : text) plain = plain && c >= 0x20 && c != 0x7f;
  return plain ? std::string(text) : Printable(text);
}

Status Refuse(const OptionSpec& spec, std::string_view text) {
  return Status::InvalidArgument("--" + spec.name + " " + Shown(text) + ": " + Hint(spec));
}

bool InRange(const OptionSpec& spec, uint64_t n) {
  return (n >= spec.whole_low && n <= spec.whole_high) || (n == 0 && spec.zero_is_automatic);
}

bool InRange(const OptionSpec& spec, double d) {
  return d >= spec.low && d <= spec.high && !(spec.above_low && d == spec.low);
}

bool IsChoice(const OptionSpec& spec, const std::string& text) {
  if (text.empty() && spec.empty_is_default) return true;
  for (const std::string& c : spec.choices) {
    if (c == text) return true;
  }
  return false;
}

// Digits only (no sign, no blanks, no "0x"): what a person types for a count.
bool ParseWhole(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  const std::string s(text);
  errno = 0;
  const unsigned long long n = std::strtoull(s.c_str(), nullptr, 10);
  if (errno != 0) return false;
  *out = n;
  return true;
}

bool ParseNumber(std::string_view text, double* out) {
  const std::string s(text);
  if (s.empty() || s.front() == ' ' || s.front() == '\t') return false;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (*end != '\0' || !std::isfinite(d)) return false;
  *out = d;
  return true;
}

}  // namespace

Status ReadOption(const OptionSpec& spec, std::string_view text, OptionTarget target) {
  switch (spec.kind) {
    case OptionKind::kText:
      *std::get<std::string*>(target) = std::string(text);
      return Status::Ok();
    case OptionKind::kChoice:
      if (!IsChoice(spec, std::string(text))) return Refuse(spec, text);
      *std::get<std::string*>(target) = std::string(text);
      return Status::Ok();
    case OptionKind::kFlag:
      if (text.empty() || text == "1" || text == "true" || text == "yes") {
        *std::get<bool*>(target) = true;
      } else if (text == "0" || text == "false" || text == "no") {
        *std::get<bool*>(target) = false;
      } else {
        return Refuse(spec, text);
      }
      return Status::Ok();
    case OptionKind::kWhole: {
      uint64_t n = 0;
      if (!ParseWhole(text, &n) || !InRange(spec, n)) return Refuse(spec, text);
      std::visit(
          [n](auto* p) {
            using T = std::remove_pointer_t<decltype(p)>;
            if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
              *p = static_cast<T>(n);  // the row's range fits the member's type
            }
          },
          target);
      return Status::Ok();
    }
    case OptionKind::kNumber: {
      double d = 0;
      if (!ParseNumber(text, &d) || !InRange(spec, d)) return Refuse(spec, text);
      *std::get<double*>(target) = d;
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Status CheckOption(const OptionSpec& spec, OptionTarget target) {
  if (spec.required && ValueText(target).empty()) {
    // CLI11's words for a missing required option, so both front ends say the same.
    return Status::InvalidArgument(
        "--" + spec.name +
        (spec.short_name != 0 ? std::string(",-") + spec.short_name : std::string()) +
        " is required");
  }
  switch (spec.kind) {
    case OptionKind::kText:
    case OptionKind::kFlag:
      return Status::Ok();
    case OptionKind::kChoice:
      if (IsChoice(spec, *std::get<std::string*>(target))) return Status::Ok();
      break;
    case OptionKind::kWhole: {
      const bool ok = std::visit(
          [&spec](auto* p) {
            using T = std::remove_pointer_t<decltype(p)>;
            if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
              if constexpr (std::is_signed_v<T>) {
                if (*p < 0) return false;
              }
              return InRange(spec, static_cast<uint64_t>(*p));
            }
            return false;
          },
          target);
      if (ok) return Status::Ok();
      break;
    }
    case OptionKind::kNumber: {
      const double d = *std::get<double*>(target);
      if (InRange(spec, d) || (d < 0 && spec.negative_is_automatic)) return Status::Ok();
      break;
    }
  }
  return Refuse(spec, ValueText(target));
}

std::string ValueText(OptionTarget target) {
  return std::visit(
      [](auto* p) -> std::string {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return *p;
        } else if constexpr (std::is_same_v<T, bool>) {
          return *p ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          return Number(*p);
        } else {
          return std::to_string(*p);
        }
      },
      target);
}

std::string OptionText(OptionTarget target) {
  const std::string text = ValueText(target);
  return text == "0" || text == "false" ? "" : text;
}

const OptionTable<ViewRequest>& ShardParameters() {
  static const OptionTable<ViewRequest> table = [] {
    OptionTable<ViewRequest> t;
    t.Text("aggregators", &ViewRequest::aggregators,
           "Aggregator QUERY endpoints HOST:PORT,... (default port 7401); else "
           "$TRAILMAP_AGGREGATORS, else `aggregators` in the config file, else 127.0.0.1:7401",
           "127.0.0.1:7401")
        .Short('a')
        .CliOnly();
    t.Text("config", &ViewRequest::config,
           "TOML file with aggregators = [\"HOST:PORT\", ...] (default $TRAILMAP_CONFIG or "
           "~/.config/trailmap/trailmap.toml)",
           "trailmap.toml")
        .CliOnly();
    t.Text("cluster", &ViewRequest::cluster,
           "Cluster file (members, zones, replication, epochs; else $TRAILMAP_CLUSTER): with "
           "replication > 1 each host-second is counted once, from the most complete of its "
           "owners that answers",
           "cluster.toml")
        .CliOnly();
    t.Text("timeout", &ViewRequest::timeout,
           "How long to wait for every shard's answer, at most 60s; the shards stop the query at "
           "9/10 of it and say so (docs/limits.md, bounded queries)",
           "10s");
    t.Whole("max-keys", &ViewRequest::max_keys, 0, UINT64_MAX,
            "Ask each shard to stop after reading this many stored keys (less than its own "
            "[queries] max_keys; default its own)",
            "100000");
    t.Whole("max-cells", &ViewRequest::max_cells, 0, UINT64_MAX,
            "Ask each shard to stop past this many cells (columns x groups; default its own "
            "[queries] max_cells)",
            "100000");
    return t;
  }();
  return table;
}

const OptionTable<ViewRequest>& ViewRequestParameters() {
  static const OptionTable<ViewRequest> table = [] {
    OptionTable<ViewRequest> t;
    t.Text("metric", &ViewRequest::metric, "Metric name, e.g. disk.latency", "disk.latency")
        .Short('m')
        .Required();
    t.Text("from", &ViewRequest::from,
           "Start: -10m, -1h, -2d, now, unix seconds or RFC 3339 (2026-11-22T16:00:00Z)", "-10m");
    t.Text("to", &ViewRequest::to, "End (exclusive), same forms as --from", "now");
    t.Text("by", &ViewRequest::by, "Group by host or by a field key (op, disk, url, ...)", "host");
    t.Text("hosts", &ViewRequest::hosts, "Only these hosts: web-1,web-2", "web-1,web-2");
    t.Text("where", &ViewRequest::where,
           "Only events that pass a predicate, evaluated in the aggregators: 'host =~ \"web.*\" "
           "and op == \"read\" and latency > 10ms' (docs/predicates.md)",
           "op == \"read\"")
        .Short('w');
    t.Append(ShardParameters());
    return t;
  }();
  return table;
}

}  // namespace trailmap
