// Enqueue functions the ICD hands out by name (clGetExtensionFunctionAddress*:
// NVIDIA's own clEnqueueWaitSemaphoresKHR, a command-buffer enqueue, the
// many a SYCL runtime looks up), given to the application as a trampoline
// that counts the command (layer/queue/epoch.hpp) and reaches the ICD's
// function with every register and stack argument untouched, any
// signature.  Without it such a lookup turns the word's users off for the
// process (note_unseen_enqueue): the blitter's automatic semaphore chain,
// and the quiet queue's handoffs (layer/queue/quiet.hpp), which on NVIDIA
// would watch every marker again once a program asked for its semaphores.
//
// Like a pass-through (layer/queue/passthrough.hpp): while no import is
// alive the command is counted as landed and the trampoline jumps to the
// ICD's function; otherwise it calls it inside a frame that counts it in
// flight until it returns.  It forwards 22 arguments of up to 64 bits, more
// than any clEnqueue* takes.
//
// A pool of 256, one trampoline per distinct ICD function (the same
// function asked again, for any name or platform, gets the same one back):
// a trampoline cannot know its target from its arguments, whose types it
// does not know, so each has its own slot to read it from.  Past the pool
// the ICD's function is handed out and the enqueue noted unseen.  Plain C++
// on every target (looked_up.cpp says how it keeps every argument); no
// sanitizer instruments it (the word is relaxed there as everywhere).
#pragma once

namespace cldmabuf {

// A counting trampoline for `fn` (the ICD's `name`), or nullptr.
void *counted_extension(const char *name, void *fn);

// How many trampolines the pool has (the unit tests exhaust it).
int counted_extension_capacity();

}  // namespace cldmabuf
