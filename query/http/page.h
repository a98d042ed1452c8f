// The web page's replies: "/" and the files beside index.html, from the embedded bytes
// (query/http/page_files.h).
#pragma once

#include <string_view>

#include "query/http/api.h"

namespace trailmap {

// The file at `path` ("/" = "/index.html") with its content type, else 404 naming the page.
HttpReply PageReply(std::string_view path);

}  // namespace trailmap
