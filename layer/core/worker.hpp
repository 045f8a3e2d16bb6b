// Layer-owned threads for host-side work that must run in queue order:
// fence waits, DMA_BUF_IOCTL_SYNC, BLT fence waits.
//
// One FIFO thread per command queue (keyed by the handle), so a fence wait of
// up to CLDMABUF_FENCE_TIMEOUT_MS on one queue never delays another queue's
// steps, while one queue's steps still run in the order they were enqueued.
// Jobs only ever block on kernel fences with a bounded timeout, never on
// OpenCL events, so a queue's thread cannot deadlock against the ICD.
//
// A queue's thread is started by its first job and ends itself once it has
// been idle for a short linger (so a released queue leaves no thread behind
// and a busy one does not pay a thread start per step); it is started again
// by the next job.  Nothing here calls the ICD.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace cldmabuf {

// Runs `job` on `key`'s thread after every job posted earlier for that key.
// `key` is the command queue (any pointer value; it is never dereferenced).
void post_to_worker(const void *key, std::function<void()> job);
// Finish every queued job of every key and join all threads (clDeinitLayer /
// exit).  Posting after this starts fresh threads.
void shutdown_worker();
// Threads currently running (tests and stats).
size_t live_workers();

// CLDMABUF_DEBUG=worker-manual (tests/README.md): post_to_worker holds each
// job instead of handing it to its thread, so that a test (tests/explore)
// decides when each runs; shutdown_worker never runs a held job.  Without
// the word both answer nothing.
bool worker_manual();
// One line per key that ever had a held job, in the order of its first job:
// "<key in hex> <jobs held> <jobs handed to its thread, not finished>",
// then "waiting <n>": threads in a layer wait for worker jobs (a clFinish
// waiting for terminated steps), which a scheduler counts as settled.
std::string held_worker_jobs();
// Brackets a bounded wait of the calling thread for worker jobs (counted
// for held_worker_jobs; one relaxed add each way).
void note_waiting_for_worker(int delta);
// Hands `key`'s oldest held job to its thread; false when it has none.
bool run_held_worker_job(const void *key);

}  // namespace cldmabuf
