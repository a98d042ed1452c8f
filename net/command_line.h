// ParseCommandLine: how every trailmap daemon reads its argv into its CLI11 flags, so that each
// answers --help and a mistyped flag the same way.
#pragma once

#include <CLI/CLI.hpp>

namespace trailmap {

// -1 when the program runs on; else the exit code to return: 0 after --help (printed), 2 after a
// flag CLI11 refused (its message and a hint printed to standard error).
inline int ParseCommandLine(CLI::App* app, int argc, char** argv) {
  try {
    app->parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app->exit(e);
  } catch (const CLI::ParseError& e) {
    app->exit(e);
    return 2;
  }
  return -1;
}

}  // namespace trailmap
