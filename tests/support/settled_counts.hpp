// Leak counts taken once the layer is quiet, for every suite's leak checks:
// the process's open fds and its file-backed mappings (process_counts.hpp),
// each taken once the layer's host-step workers are idle (no per-queue
// thread alive: each has a stack mapping; a release's unmap or a staging
// slot's free may still be finishing on one) and the count has stopped moving
// (ICDs such as rusticl, and Mesa's threads, open and close files of their own
// a moment after the call that freed them).  A check compares two settled
// counts.
#pragma once

#include <CL/cl.h>

namespace cldmabuf::test {

// Up to 5 s for the layer's host-step threads on `platform` to end (asked of
// the layer's CL_PLATFORM_STATS_CLDMABUF; returns at once without the layer or
// with no platform).
void wait_for_idle_workers(cl_platform_id platform);

// A count unchanged for five looks 20 ms apart (bounded at 2 s), after
// wait_for_idle_workers(platform).
int settled_count(cl_platform_id platform, int (*count)());
// The two leave out the mapping cache's parked mappings (each one fd and one
// mapping, CL_STATS_PARKED_MAPPINGS_CLDMABUF): the layer keeps them by design
// and lets them go on its own schedule (layer/dmabuf/mapping_cache.hpp).
int settled_fds(cl_platform_id platform);
int settled_mappings(cl_platform_id platform);
// The mapping cache's parked mappings now (0 without the layer).
int parked_mappings(cl_platform_id platform);
// The open fds now less the parked mappings, both of one moment (not settled).
int unparked_fds_now(cl_platform_id platform);

// The layer's step barrier-callback records (CL_STATS_STEP_CALLBACK_RECORDS_CLDMABUF,
// a gauge) once they equal `expected`, or as they stand after 3 s.  Each look
// finishes `queue` first: a terminated step's record goes at the sweep of the
// application's next clFinish after the step ended.
cl_ulong step_callback_records_toward(cl_platform_id platform, cl_command_queue queue, cl_ulong expected);

}  // namespace cldmabuf::test
