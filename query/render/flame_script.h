// The flame graph SVG's script (flame_script.js beside this file: zoom, reset, search, details),
// embedded at build time by cmake/embed_files.cmake as the web page's files are
// (query/http/page_files.h): RenderFlameSvg writes it into every SVG, and nothing is read at run
// time. flame_script_test.js runs it under Node.js on rendered SVGs (cli/CMakeLists.txt).
#pragma once

#include <string_view>

namespace trailmap {

// flame_script.js's bytes (generated).
std::string_view FlameScript();

}  // namespace trailmap
