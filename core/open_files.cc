#include "core/open_files.h"

#include <sys/resource.h>

namespace trailmap {

uint64_t RaiseOpenFileLimit() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) return 0;
  if (files.rlim_cur < files.rlim_max) {
    const rlim_t was = files.rlim_cur;
    files.rlim_cur = files.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &files) != 0) return was;
  }
  return files.rlim_cur;
}

uint64_t OpenFileLimit() {
  rlimit files{};
  return getrlimit(RLIMIT_NOFILE, &files) == 0 ? files.rlim_cur : 0;
}

}  // namespace trailmap
