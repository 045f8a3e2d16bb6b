// The fast paths' one interface: which form the enqueue word's
// hot spots take on this build, and the contract every form keeps.
//
// Three hot spots count application commands into the enqueue word
// (layer/queue/epoch.hpp):
//   count_landed()            the locked add of a command counted as landed;
//   the pass-through's fast   compare the live-import count, branch to the
//     half (passthrough.hpp)  slow half, count as landed, tail-jump to the
//                             ICD's slot, registers and stack untouched;
//   the counting trampolines  the same for an ICD enqueue handed out by name
//     (looked_up.cpp)         (any signature), with a frame that keeps the
//                             command in flight when an import is alive.
//
// Each comes in two forms with the same guarantees (the invariant of
// docs/layer-rules.md, "The queue protocol"; the tests: test_counted_extensions,
// test_dispatch_table, testicd-races, testicd-fast-paths):
//   - assembly, one file per architecture (fast_path_<arch>.hpp: the asm
//     text, operands numbered as that file says), where it pays: GCC gives
//     the C++ form a frame and stack copies around the tail call, past a
//     pass-through's bound of +5 instructions (layer/base/name_filter.hpp);
//   - portable C++, on every other target and wherever the sanitizer must
//     see the word's writes (TSan), or when asked for with
//     `-Dfast_paths=portable` (meson_options.txt; CI builds x86-64 so, so the
//     portable form is tested on its own where the assembly is the default).
//     Its trampolines forward 22 arguments of up to 64 bits (22 or 44 machine
//     words) and are built
//     with general-regs-only, so floating-point and vector argument and
//     result registers pass through untouched (no clEnqueue* has any, the
//     unit tests check it anyway).
//
// No form may lose the quiet queue or the blitter chain: every build has the
// trampolines (counted_extension_capacity() is never 0), so looking an ICD
// enqueue up never turns the word's users off (note_unseen_enqueue) unless
// the pool is exhausted.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define CLDMABUF_FAST_PATHS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CLDMABUF_FAST_PATHS_TSAN 1
#endif
#endif

#if defined(__x86_64__) && !defined(CLDMABUF_FAST_PATHS_TSAN) && !defined(CLDMABUF_PORTABLE_FAST_PATHS)
#include "layer/queue/fast_path_x86_64.hpp"
#define CLDMABUF_FAST_PATHS_ASM 1
#else
#define CLDMABUF_FAST_PATHS_ASM 0
#endif

namespace cldmabuf {

// "x86-64 asm" or "portable": for the log, cldmabuf-info's tests and the
// unit test that checks a build took the form it was configured for.
#if CLDMABUF_FAST_PATHS_ASM
inline constexpr const char *kFastPathsForm = CLDMABUF_FAST_PATHS_ARCH;
#else
inline constexpr const char *kFastPathsForm = "portable";
#endif

}  // namespace cldmabuf
