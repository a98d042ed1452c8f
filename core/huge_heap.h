// PreferHugePages: back the malloc heap with transparent huge pages, for programs that build
// large short-lived views (the CLI, trailmap-query).
//
// A 3,600-column heat map allocates ~60 MB in a fresh process, and every first touch of a 4 KiB
// page is a fault: 17,800 of them, a third of the CLI's time on this (virtualized) machine. With
// 2 MiB pages the same run takes ~1,900 (docs/BENCHMARKS.md). This does what glibc's
// `glibc.malloc.hugetlb=1` tunable does, without the environment: it reserves address space at
// the top of the heap in one step (M_TOP_PAD: untouched pages cost nothing), keeps freed memory
// (M_TRIM_THRESHOLD), serves blocks up to 64 MiB from the heap rather than from separate mmaps,
// has every thread allocate from it (M_ARENA_MAX 1: for one view at a time, not for a server
// of many concurrent requests), and asks for huge pages on the whole of it (madvise MADV_HUGEPAGE;
// honoured when /sys/kernel/mm/transparent_hugepage/enabled is `always` or `madvise`, a no-op
// otherwise).
//
// Call once at the start of main(), before large allocations. Not for sanitizer builds (they
// replace malloc; it returns without doing anything there).
#pragma once

#include <cstddef>

namespace trailmap {

// Returns the bytes of heap now advised for huge pages (0 when nothing was done).
size_t PreferHugePages(size_t reserve_bytes = size_t{256} << 20);

// KeepFreedMemory: for servers (the aggregator, trailmap-query), which build a short-lived
// answer per query on threads of their own. glibc gives a thread's arena back to the kernel
// once more than 128 KiB is free at its top, and serves blocks from 128 KiB up (the answer's
// buffers) from mmaps it unmaps on free: every query faulted its memory in again, ~2,000 faults
// of 4 KiB for one columns query of 1,000 hosts (~16 µs each on this virtualized machine). This
// keeps up to `keep_bytes` free at the top of each arena and serves blocks below 32 MiB from the
// arenas: the same query then takes ~12 faults (docs/benchmarks-log.md, "The views at fleet scale"). What a server
// keeps is the peak of its queries, at most keep_bytes more per arena. With `arenas` > 0, at
// most that many arenas (M_ARENA_MAX): glibc otherwise gives each thread that meets another in
// malloc an arena of its own (up to 8 per core), each keeping its own peak; trailmap-query's 8
// workers kept ~0.5 GB after a few large answers. Not for sanitizer builds (returns false
// there).
bool KeepFreedMemory(size_t keep_bytes = size_t{64} << 20, int arenas = 0);

// ReleaseFreedMemory: gives the free pages of every arena back to the kernel (malloc_trim), for
// after an outsized request whose peak would otherwise stay resident. Under AddressSanitizer,
// its allocator's purge instead (which empties its quarantine too). A few ms per GB of heap.
void ReleaseFreedMemory();

}  // namespace trailmap
