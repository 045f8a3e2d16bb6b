// Forced into every layer/i915 compile (layer/i915/meson.build): the
// hardware folder sees fds, GEM handles and batch plans, never an OpenCL
// type; what OpenCL asks of the blitter is layer/blit's.  An OpenCL header
// included here, directly or through another header, then fails the build
// at its first typedef, as does a cl_* type written in i915 code.
#pragma once

#pragma GCC poison cl_int cl_uint cl_mem cl_event cl_device_id cl_context cl_command_queue cl_platform_id
