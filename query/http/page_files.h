// The web page's files (query/http/page/), embedded in trailmap-query at build time by
// cmake/embed_files.cmake: the node serves them from memory and reads nothing at run time.
//
// PageReply answers a GET of a path outside /api/: "/" is index.html, "/app.js" that file, with
// its content type and a Cache-Control that lets a browser keep them until the binary changes
// (the page asks again on reload; the bytes are small). 404 for any other path.
#pragma once

#include <string_view>
#include <vector>

namespace trailmap {

struct PageFile {
  std::string_view path;  // "/index.html"
  std::string_view bytes;
};

// Every embedded file (generated).
const std::vector<PageFile>& PageFiles();

}  // namespace trailmap
