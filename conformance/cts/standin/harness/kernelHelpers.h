// Stand-in for the parts of the CTS's test_common/harness/kernelHelpers.h
// the tests use.
#pragma once

#include <CL/cl.h>

bool is_extension_available(cl_device_id device, const char *extensionName);
// Builds `num_sources` sources into *out_program and makes *out_kernel of
// `kernel_name`; CL_SUCCESS or the failing call's error (the build log printed).
int create_single_kernel_helper(cl_context context, cl_program *out_program, cl_kernel *out_kernel,
                                unsigned int num_sources, const char **sources, const char *kernel_name,
                                const char *build_options = nullptr);
