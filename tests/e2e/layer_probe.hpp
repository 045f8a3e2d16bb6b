// What the layer did on this ICD, asked of the layer itself, so that the
// tests hold on every ICD (PoCL, NVIDIA, NEO, rusticl): the layer's counters
// (CL_PLATFORM_STATS_CLDMABUF), whether it takes the Gen9 blitter for copies
// on this device, and bounded polls for what ICDs do later than PoCL
// (NVIDIA and NEO destroy objects and run destructor callbacks a while after
// clReleaseMemObject returns).
#pragma once

#include <array>
#include <functional>

#include "CL/cl_ext_cldmabuf.h"
#include "cl_fixture.hpp"

namespace e2e {

using LayerStats = std::array<cl_ulong, CL_STATS_COUNT_CLDMABUF>;

// The layer's counters now (all zero, with a failed CHECK, when the layer
// does not answer).
LayerStats layer_stats(cl_platform_id platform);

// Whether a copy between two imports on the test platform's device runs on
// the blitter: one 4 KiB copy is tried once per process (in a context of its
// own) and the blitter counter asked.  False without the virtual Gen9, with CLDMABUF_BLT=off or
// CLDMABUF_IMPORT=copy, and for a device the layer does not pair with the
// Gen9 node (NVIDIA, any non-Intel GPU).
bool layer_takes_blitter();

// Whether the layer imports a dma-buf buffer in place on the first device
// (asked once per process: one 4 KiB import and its route).  False where the
// copy route is forced (CLDMABUF_IMPORT=copy, CLDMABUF_DEBUG=zero-copy-fail)
// and on devices without host-unified memory (NVIDIA's discrete GPU).
bool layer_imports_in_place();

// CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF of an import (the query is REQUIREd
// to succeed).
cl_uint route_of(cl_mem mem);
// Whether `mem` is the layer's own import (it answers the route query),
// not the ICD's native dma-buf import.
bool layer_import(cl_mem mem);

// Whether the layer can make a fence of its own here (sw_sync, or vgem):
// the same probe that decides sync_fd export of its semaphores.
bool layer_has_fence_source(const ClEnv &env);
// CLDMABUF_FENCE_TIMEOUT_MS as the layer reads it (1000 ms when unset).
int fence_timeout_ms();
// The layer's fence waits given up at CLDMABUF_FENCE_TIMEOUT_MS and its
// release fences signalled at that bound: "nothing waited for the timeout"
// read from the layer's counters rather than from a clock (a loaded machine
// stretches any timing; a wait that hit the bound shows here either way).
cl_ulong bound_hits(const ClEnv &env);

// Polls `done` every 5 ms for up to `ms`: true as soon as it holds.
bool eventually(const std::function<bool()> &done, int ms = 3000);
// Whether `fd` is closed within 2 s.  The layer's host steps hold their
// objects until the worker is done with them, which may be a moment after
// clFinish: an imported fd closes when the last reference goes (deferred
// deletion, as the spec allows).
bool closes_soon(int fd);
// /proc/self/maps lines once the layer is quiet: no host-step thread alive
// (they end after a short idle linger; each has a stack mapping) and the
// count unchanged for 100 ms (lazy destruction in the ICD), bounded at 5 s.
// Leak checks compare two settled counts.
int settled_mappings();

// The process's open fds once the layer's workers are idle and the count is stable.
int settled_fds();
// Mappings of the file with inode number `ino` in /proc/self/maps (a
// dma-buf's: the layer's, the test's own, a parked one).
int mappings_of_inode(unsigned long long ino);
// Both leave out the mapping cache's parked mappings (settled_counts.hpp).
// The fds a live import's mapping adds beside the layer's duplicate: the
// mapping cache's own fd of it (1 unless CLDMABUF_MAP_CACHE_MB=0).
int cache_fds_per_import();
// count_open_fds() and count_mappings() less the parked mappings.
int unparked_fds();
int unparked_mappings();
// The open-fd count as soon as it equals `expected`, or as it stands after
// 3 s.  "After" checks use it: an ICD's own threads (Mesa's shader disk
// cache on rusticl) open and close files of their own at any moment, so an
// instant count may hold one of theirs; a leak of ours never goes away.
// CHECK(open_fds_toward(n) == n) prints both numbers when it fails.
int open_fds_toward(int expected);

}  // namespace e2e
