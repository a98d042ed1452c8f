#include "core/huge_heap.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#if defined(__SANITIZE_ADDRESS__)
#define TRAILMAP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TRAILMAP_ASAN 1
#endif
#endif

#ifdef TRAILMAP_ASAN
// The sanitizer runtime's (sanitizer/allocator_interface.h, which GCC does not install).
extern "C" void __sanitizer_purge_allocator();
#endif

namespace trailmap {

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
constexpr bool kSanitized = __has_feature(address_sanitizer) || __has_feature(thread_sanitizer);
#else
constexpr bool kSanitized = false;
#endif

}  // namespace

size_t PreferHugePages(size_t reserve_bytes) {
  if (kSanitized) return 0;  // the sanitizers' allocator has its own heap
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  if (mallopt(M_TOP_PAD, static_cast<int>(reserve_bytes)) == 0) return 0;
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(reserve_bytes));
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  // One heap for every thread: each other thread would get an arena of its own, mapped apart
  // and not advised, and a view's worker threads (core/parallel.h) allocate most of a trails
  // document there (7,300 faults, ~0.1 s, for 1,000 trails as JSON; ~1,000 with this).
  mallopt(M_ARENA_MAX, 1);
  // One allocation past the top makes the heap grow by reserve_bytes now; freed, it stays (the
  // trim threshold), and the heap's pages from here on are the reserved ones.
  void* probe = std::malloc(1 << 20);
  if (probe == nullptr) return 0;
  const uintptr_t low = (reinterpret_cast<uintptr_t>(probe) + kHugePage - 1) & ~(kHugePage - 1);
  std::free(probe);
  const uintptr_t high = reinterpret_cast<uintptr_t>(sbrk(0)) & ~(kHugePage - 1);
  if (high <= low) return 0;
  if (madvise(reinterpret_cast<void*>(low), high - low, MADV_HUGEPAGE) != 0) return 0;
  return high - low;
}

bool KeepFreedMemory(size_t keep_bytes, int arenas) {
  if (kSanitized) return false;
  if (arenas > 0 && mallopt(M_ARENA_MAX, arenas) == 0) return false;
  return mallopt(M_TRIM_THRESHOLD, static_cast<int>(keep_bytes)) != 0 &&
         mallopt(M_MMAP_THRESHOLD, 32 << 20) != 0;
}

void ReleaseFreedMemory() {
#ifdef TRAILMAP_ASAN
  __sanitizer_purge_allocator();
#else
  malloc_trim(0);
#endif
}

}  // namespace trailmap
