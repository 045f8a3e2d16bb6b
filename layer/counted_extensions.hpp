// Enqueue functions the ICD hands out by name (clGetExtensionFunctionAddress*:
// NVIDIA's own clEnqueueWaitSemaphoresKHR, a command-buffer enqueue), given
// to the application as a trampoline that counts the command in the enqueue
// epoch (layer/enqueue_epoch.hpp) and jumps to the ICD's function with every
// register and stack argument untouched: two instructions, any signature.
// Without it such a lookup turns the epoch's users off for the process
// (note_unseen_enqueue): the blitter's automatic semaphore chain, and the
// quiet queue's handoffs (layer/handoff/quiet_queue.hpp), which on NVIDIA
// went back to watching every marker once a program had asked for its
// semaphores (issue #18, device call of 2026-12-04).
//
// A fixed pool, one trampoline per distinct ICD function (the same function
// asked again, for any name or platform, gets the same one back); an
// exhausted pool, a target without x86-64 or a TSan build (whose sanitizer
// would not see the counter's write) hands out the ICD's function and notes
// the enqueue unseen, as before.
#pragma once

namespace cldmabuf {

// A counting trampoline for `fn` (the ICD's `name`), or nullptr.
void *counted_extension(const char *name, void *fn);

// How many trampolines the pool has (the unit tests exhaust it).
int counted_extension_capacity();

}  // namespace cldmabuf
