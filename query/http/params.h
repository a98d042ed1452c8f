// The parameters of an HTTP GET: "/api/heatmap?metric=disk.latency&from=-10m" split into the path
// and its parameters, percent-decoded ("%20" and "+" are spaces), named as the CLI's long options
// without the dashes in front ("per-column", "baseline-from").
//
// The path is never decoded: RequestPath accepts it in one form only, so the path the server
// authorizes is byte for byte the path the API routes (an encoded "/%61pi/" cannot be one thing
// to the token check and another to the router). Every name and value must be UTF-8 once
// decoded: the answers are JSON, which holds nothing else.
//
// A Params is read by asking for each known parameter, a row of a view's table at a time
// (query/run/options.h: ReadOptions below, the reader the CLI's options go through too); what
// nobody asked for is a mistake the user should hear about (a typo would otherwise be silently
// ignored), so Unknown() names it. Errors are InvalidArgument with the CLI's way of naming a flag
// ("--rows: ...").
//
// Value type; not thread-safe (each request has its own).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "core/status.h"
#include "query/run/options.h"

namespace trailmap {

// The path of a request target ("/api/heatmap" of "/api/heatmap?metric=m"), as the router
// matches it, or InvalidArgument when it is not in the only form trailmap-query serves: "/" or
// "/" followed by segments joined by "/", each of A-Z a-z 0-9 - . _ ~ and neither "." nor "..".
// So no percent escape, no empty segment ("//", a trailing "/"), no "#", ";", "\" or control
// byte, and no absolute form ("http://host/..."): none of the paths the API and the page have
// need one, and each would let two spellings name one path.
Result<std::string> RequestPath(std::string_view target);

class Params {
 public:
  // Splits `target` ("/path?a=1&b=2") into the path (RequestPath) and its parameters. A
  // parameter given twice is an error, as are a malformed percent escape and a name or value
  // that is not UTF-8 once decoded (the message names the parameter).
  static Result<Params> Parse(std::string_view target);

  const std::string& path() const { return path_; }
  bool Has(const std::string& name) const { return values_.count(name) > 0; }

  // The parameter of `spec` (and its negation, "no-panel") read by ReadOption into `target` when
  // given, as the CLI reads the option; OptionFront::kCli rows are not parameters and stay unread.
  Status Read(const OptionSpec& spec, OptionTarget target);

  // InvalidArgument naming the first parameter nothing asked for, else Ok.
  Status Unknown() const;

 private:
  const std::string* Take(const std::string& name);

  std::string path_;
  std::map<std::string, std::string> values_;
  std::set<std::string> taken_;
};

// Every row of `table` read into `request`: the first refusal, else Ok.
template <typename Request>
Status ReadOptions(Params* params, const OptionTable<Request>& table, Request* request) {
  for (const OptionRow<Request>& row : table.rows()) {
    if (Status s = params->Read(row.spec, row.member(*request)); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace trailmap
