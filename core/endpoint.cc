#include "core/endpoint.h"

#include <charconv>

namespace trailmap {

Result<std::string> ParseEndpoint(std::string_view entry, uint16_t default_port) {
  if (entry.substr(0, 6) == "tcp://") entry.remove_prefix(6);
  std::string_view host = entry;
  uint16_t port = default_port;
  const size_t colon = entry.rfind(':');
  if (colon != std::string_view::npos) {
    host = entry.substr(0, colon);
    const std::string_view digits = entry.substr(colon + 1);
    unsigned value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || value == 0 ||
        value > 65535) {
      return Status::InvalidArgument(
          "bad port in \"" + std::string(entry) +
          "\": use HOST:PORT, e.g. 127.0.0.1:" + std::to_string(default_port));
    }
    port = static_cast<uint16_t>(value);
  }
  if (host.empty()) {
    return Status::InvalidArgument(
        "missing host in \"" + std::string(entry) +
        "\": use HOST:PORT, e.g. 127.0.0.1:" + std::to_string(default_port));
  }
  return "tcp://" + std::string(host) + ":" + std::to_string(port);
}

Result<std::vector<std::string>> ParseEndpointList(std::string_view list, uint16_t default_port) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view entry = list.substr(start, comma - start);
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    if (entry.empty()) {
      return Status::InvalidArgument("empty entry in aggregator list \"" + std::string(list) +
                                     "\": use HOST:PORT,HOST:PORT");
    }
    Result<std::string> endpoint = ParseEndpoint(entry, default_port);
    if (!endpoint.ok()) return endpoint.status();
    out.push_back(std::move(endpoint).value());
    start = comma + 1;
  }
  return out;
}

}  // namespace trailmap
