// Large host copies on several cores.
//
// The copy route's staging (layer/handoff/staging.cpp) moves every byte through one
// CPU copy between the dma-buf's mapping and a pinned slot: on one core that
// copy runs near 10 GB/s while a discrete GPU's DMA from pinned memory runs
// at ~55 GB/s (NVIDIA H200, measured with bench-staging), so the copy route
// was CPU bound.  Copies of at least 2 MiB are split into 1 MiB pieces taken
// by the calling thread and up to CLDMABUF_COPY_THREADS-1 helper threads.
//
// Helper threads start on the first large copy and end after 500 ms idle,
// like the per-queue workers.  They only ever run memcpy: they never call the
// ICD or wait on anything but the next piece, so a copy always finishes.
#pragma once

#include <cstddef>

namespace cldmabuf {

// memcpy(dst, src, len) for non-overlapping ranges, on several threads when
// it is large enough to pay for them.
void parallel_copy(void *dst, const void *src, size_t len);

// CLDMABUF_COPY_THREADS (read once): threads per copy, the caller included.
// Default: half the CPUs this process may run on, between 1 and 8.
unsigned copy_threads();

// Helper threads alive now (tests).
size_t live_copy_threads();

}  // namespace cldmabuf
