#include "agent/prom_write_config.h"

#include "core/endpoint.h"
#include "core/series.h"

namespace trailmap {

Status SetPromWriteKey(std::string_view key, const std::optional<std::string>& text,
                       const std::optional<int64_t>& number, PromWriteConfig* config) {
  const std::string at = "prometheus." + std::string(key);
  std::string* strings[] = {&config->listen, &config->host_label, &config->writers};
  const std::string_view string_keys[] = {"listen", "host_label", "writers"};
  for (size_t i = 0; i < 3; ++i) {
    if (key != string_keys[i]) continue;
    if (!text) return Status::InvalidArgument(at + " must be a string");
    *strings[i] = *text;
    return Status::Ok();
  }
  int64_t* numbers[] = {&config->max_hosts, &config->max_series, &config->max_backlog_batches,
                        &config->max_body_bytes, &config->max_uncompressed_bytes};
  const std::string_view number_keys[] = {"max_hosts", "max_series", "max_backlog_batches",
                                          "max_body_bytes", "max_uncompressed_bytes"};
  for (size_t i = 0; i < 5; ++i) {
    if (key != number_keys[i]) continue;
    if (!number) return Status::InvalidArgument(at + " must be an integer");
    *numbers[i] = *number;
    return Status::Ok();
  }
  return Status::InvalidArgument(at +
                                 ": unknown key (known: listen, host_label, writers, max_hosts, "
                                 "max_series, max_backlog_batches, max_body_bytes, "
                                 "max_uncompressed_bytes)");
}

Status ValidatePromWriteConfig(const PromWriteConfig& c) {
  if (c.listen == "off") return Status::Ok();
  Result<HostPort> hp = ParseHostPort(c.listen);
  if (!hp.ok()) {
    return Status::InvalidArgument("prometheus.listen (--prom-write): " + hp.status().message() +
                                   " (or \"off\")");
  }
  if (Status s = ValidateField(c.host_label, "v"); !s.ok() || c.host_label == "__name__") {
    return Status::InvalidArgument("prometheus.host_label \"" + c.host_label +
                                   "\" is not a label name");
  }
  const struct {
    const char* name;
    int64_t value, lo, hi;
  } ranges[] = {{"max_hosts", c.max_hosts, 1, 1'000'000},
                {"max_series", c.max_series, 1, 100'000'000},
                {"max_backlog_batches", c.max_backlog_batches, 0, 100'000'000},
                {"max_body_bytes", c.max_body_bytes, 1024, int64_t{1} << 30},
                {"max_uncompressed_bytes", c.max_uncompressed_bytes, 1024, int64_t{1} << 30}};
  for (const auto& r : ranges) {
    if (r.value < r.lo || r.value > r.hi) {
      return Status::InvalidArgument("prometheus." + std::string(r.name) + " " +
                                     std::to_string(r.value) + " is outside " +
                                     std::to_string(r.lo) + ".." + std::to_string(r.hi));
    }
  }
  const bool loopback = hp->host == "127.0.0.1" || hp->host == "::1" || hp->host == "localhost";
  if (!loopback && c.writers.empty()) {
    return Status::InvalidArgument(
        "prometheus.listen " + c.listen +
        " is beyond loopback: give prometheus.writers, a file of bearer tokens and the hosts "
        "each may write, or anyone who reaches the port writes any host");
  }
  return Status::Ok();
}

}  // namespace trailmap
