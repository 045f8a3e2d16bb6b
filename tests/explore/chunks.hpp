// What the scenarios are made of: the world they open (a context, one or two
// in-order queues, a dma-buf of the virtual Gen9 the CPU filled with v0, its
// imports), the chunks of their programs, and the checks between steps and
// after the last one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "CL/cl_ext_cldmabuf.h"
#include "explorer.hpp"

namespace explore {

constexpr size_t kBytes = 4096;
constexpr size_t kWords = kBytes / 4;

// v0 (the CPU's, before), v1, v2, v3 (a write that must not land); one
// process per schedule, so a global.
constexpr size_t kValues = 4;
extern uint32_t values[kValues][kWords];

// The platform's device, a context, queue 0, a fresh dma-buf the CPU filled
// with v0, and the fds open before it.
void open_world(World &w);
// The dma-buf's own fd (the test's, open until the end check).
int dmabuf_fd();
// The fds open now become those the end check expects (after a set-up that
// made what lives for the process by design, the blitter's batch pool).
void note_open_fds(World &w);
// Queue 1, in order like queue 0 or out of order.
void open_second_queue(World &w, bool out_of_order = false);
// An import of the dma-buf (a dup of its fd), named.
void import(World &w, const std::string &name, cl_mem_flags flags = CL_MEM_READ_WRITE);
// A plain buffer of the context (kBytes), named among the imports.
void plain_buffer(World &w, const std::string &name);

cl_int status(cl_event e);
std::array<cl_ulong, CL_STATS_COUNT_CLDMABUF> layer_stats(World &w);
// DMA_BUF_IOCTL_SYNC END calls the virtual Gen9 has seen on its dma-bufs.
uint64_t sync_ends();
// Events the test ICD holds now (the application's and those of commands
// still queued): an enqueued marker is one more until it ran.
cl_ulong icd_live_events(World &w);

// ---- the chunks (q: 0 or 1, the queue) ----
Chunk user_event(const std::string &name);
Chunk acquire(const std::string &mem, const std::string &ev, const std::string &after, int q = 0);
// Words [first, first + count) of v written to `mem`, after the events
// named in `after` (comma-separated; what orders commands on an
// out-of-order queue), as acquire and release take them.
Chunk write(const std::string &mem, int v, const std::string &ev, int q = 0, size_t first = 0,
            size_t count = kWords, const std::string &after = "");
Chunk release(const std::string &mem, const std::string &ev, int q = 0, const std::string &after = "");
// An acquire on queue 0 with no wait list that must be fast and quiet (the
// layer's counters around the call): the queue is idle, as clFinish left it.
// `quiet_too` false: fast is enough (a queue never finished is not known idle).
Chunk fast_acquire(const std::string &mem, const std::string &ev, bool quiet_too = true);
// An import made, or its cl_mem released, in the program.
Chunk import_now(const std::string &mem);
Chunk release_import(const std::string &mem);
Chunk complete(const std::string &ev, cl_int st);
// clFinish on queue q, then the status each named event must have.
Chunk finish(std::map<std::string, bool> must_complete, bool must_succeed, int q = 0);
// clFinish on queue 0 must report a failure: `ev` failed and nothing since.
Chunk finish_reporting(const std::string &ev);
Chunk release_everything();

// ---- the checks ----
// Between two steps: while `acq` has completed (the dma-buf is OpenCL's) and
// `write` has not, an implicit-sync consumer must see a writer's fence; with
// `rel` named, once that release was enqueued (its fence is what the
// consumer waits for: before, nothing of it exists yet).
void fence_while_writing(World &w, const std::string &acq, const std::string &write, const std::string &rel = "");
// After every step ended: the CPU reads `expected` from the dma-buf; the fds
// and the ICD's buffers and events are back to none (a mapping the cache
// parked must go once the test closed its own fd: its reaper sees it alone);
// no wait of the layer's reached its bound.
void check_end(World &w, const uint32_t *expected);
inline void check_end(World &w, int v) { check_end(w, values[v]); }

}  // namespace explore
