#include "query/http/page.h"

#include <string>

#include "query/http/page_files.h"

namespace trailmap {
namespace {

std::string_view TypeOf(std::string_view path) {
  const auto ends = [path](std::string_view suffix) {
    return path.size() >= suffix.size() && path.substr(path.size() - suffix.size()) == suffix;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  return "application/octet-stream";
}

}  // namespace

HttpReply PageReply(std::string_view path) {
  if (path == "/") path = "/index.html";
  for (const PageFile& file : PageFiles()) {
    if (file.path != path) continue;
    HttpReply reply;
    reply.content_type = std::string(TypeOf(path));
    reply.body = std::string(file.bytes);
    reply.headers.emplace_back("Cache-Control", "no-cache");
    return reply;
  }
  return ErrorReply(
      404, "no such path " + std::string(path) + ": the page is at / and the API under /api/");
}

}  // namespace trailmap
