#include "net/endpoint.h"

#include <charconv>

namespace trailmap {
namespace {

std::string Quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

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

Result<HostPort> ParseHostPort(std::string_view text) {
  HostPort out;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return Status::InvalidArgument(Quoted(text) + " is not [IPv6]:PORT");
    }
    out.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon) {
      return Status::InvalidArgument(Quoted(text) + " is not HOST:PORT");
    }
    out.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
  }
  if (out.host.empty()) return Status::InvalidArgument(Quoted(text) + " has no host before ':'");
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || port.empty() || value == 0 ||
      value > 65535) {
    return Status::InvalidArgument(Quoted(text) + ": port must be 1..65535");
  }
  out.port = static_cast<uint16_t>(value);
  return out;
}

}  // namespace trailmap
