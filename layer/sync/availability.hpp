// Whose semaphores a platform gets (CLDMABUF_SEMAPHORES=auto|off, and
// CLDMABUF_DEBUG=semaphores-force):
//   auto   an ICD that lists cl_khr_semaphore keeps its own, untouched
//          (strings, queries, functions: NVIDIA's opaque-fd semaphores stay
//          NVIDIA's and the layer adds no sync_fd on top: a layer semaphore
//          cannot wait on or signal an ICD semaphore); every other ICD gets
//          the layer's
//   force  the layer's on every ICD (the ICD's semaphore functions are not
//          handed out; a test instrument, CLDMABUF_DEBUG=semaphores-force:
//          rusticl with the layer's forced on)
//   off    the layer adds no semaphores
// What the layer then adds to the platform and device queries and which
// function names it hands out.  docs/semaphores.md.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "layer/sync/semaphore_compat.h"

namespace cldmabuf::sync {

enum class SemaphoreMode { automatic, force, off };
SemaphoreMode semaphore_mode();

// The layer's semaphores serve this platform (checked once per platform).
bool layer_semaphores_on(cl_platform_id platform);
bool layer_semaphores_on_device(cl_device_id device);

// The extensions the layer adds for `platform` (empty where it adds none).
std::vector<std::pair<const char *, cl_version>> semaphore_extensions(cl_platform_id platform);

// The semaphore queries of clGetPlatformInfo / clGetDeviceInfo where the
// layer serves them: true and *err set, else false (ask the ICD).
bool semaphore_platform_info(cl_platform_id platform, cl_platform_info name, size_t size, void *value,
                             size_t *size_ret, cl_int *err);
bool semaphore_device_info(cl_device_id device, cl_device_info name, size_t size, void *value, size_t *size_ret,
                           cl_int *err);

// Whether the layer hands out its semaphore functions (listed in
// layer/entry/dispatch_table.cpp) for `platform`; nullptr platform:
// clGetExtensionFunctionAddress, where `icd_answered` says whether the ICD
// had the name: its own then, unless CLDMABUF_DEBUG=semaphores-force.
bool hand_out_semaphore_functions(cl_platform_id platform, bool icd_answered);

}  // namespace cldmabuf::sync
