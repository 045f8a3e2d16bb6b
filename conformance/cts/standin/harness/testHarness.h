// Stand-in for the OpenCL-CTS harness's test registration and run loop
// (test_common/harness/testHarness.h), enough for the tests in
// conformance/cts/cl_khr_external_memory_dma_buf to build and run where no
// CTS source is at hand (the CTS is not a Debian package).  Same names and
// signatures as the CTS's, written here from its documented behaviour; the
// real harness replaces it when the module builds inside the CTS
// (conformance/cts/README.md).
#pragma once

#include <CL/cl.h>

#include <vector>

#include "errorHelpers.h"
#include "kernelHelpers.h"

class Version {
public:
    Version() = default;
    Version(cl_uint major, cl_uint minor): m_major(major), m_minor(minor) {}
    cl_uint get_major() const { return m_major; }
    cl_uint get_minor() const { return m_minor; }
    bool operator<(const Version &o) const { return m_major * 100 + m_minor < o.m_major * 100 + o.m_minor; }

private:
    cl_uint m_major = 0, m_minor = 0;
};

typedef int (*test_function_pointer)(cl_device_id device, cl_context context, cl_command_queue queue,
                                     int num_elements);

struct test_definition {
    test_function_pointer func;
    const char *name;
    Version min_version;
};

enum test_status {
    TEST_PASS = 0,
    TEST_FAIL = 1,
    TEST_SKIP = 2,
    TEST_SKIPPED_ITSELF = -100,
};

class test_registry {
public:
    static test_registry &getInstance();
    test_definition *definitions() { return m_definitions.data(); }
    size_t num_tests() { return m_definitions.size(); }
    void add_test(test_function_pointer fn, const char *name, Version version) {
        m_definitions.push_back({fn, name, version});
    }

private:
    std::vector<test_definition> m_definitions;
};

// Registers test_<name> at static-initialisation time, then opens its body,
// as the CTS's REGISTER_TEST does.
#define REGISTER_TEST_VERSION(name, version)                                                                \
    int test_##name(cl_device_id device, cl_context context, cl_command_queue queue, int num_elements);     \
    static const bool registered_##name =                                                                   \
        (test_registry::getInstance().add_test(test_##name, #name, version), true);                         \
    int test_##name(cl_device_id device, cl_context context, cl_command_queue queue, int num_elements)
#define REGISTER_TEST(name) REGISTER_TEST_VERSION(name, Version(1, 2))

#define REQUIRE_EXTENSION(name)                                                      \
    do {                                                                             \
        if (!is_extension_available(device, name)) {                                \
            log_info(name " is not supported on this device. Skipping test.\n");     \
            return TEST_SKIPPED_ITSELF;                                              \
        }                                                                            \
    } while (0)

// Picks the platform and device (CL_PLATFORM_INDEX, CL_DEVICE_INDEX,
// CL_DEVICE_TYPE, as the CTS; CLDMABUF_TEST_PLATFORM, a substring of the
// platform name, as this project's suites), makes one context and one
// in-order queue, runs the tests named on the command line (all without
// names; "--list" lists them), and prints the CTS's lines:
//   "<name>...", "<name> passed", "<name> FAILED", "<name> test not supported",
//   "PASSED n of n tests." / "FAILED m of n tests."
// then a Catch2-style "test cases:" line (scripts/catch2-tally) and, for each
// skip, its reason as "<name>: SKIPPED:" with the test's last log line.
// Returns EXIT_SUCCESS iff nothing failed.
int runTestHarness(int argc, const char *argv[], size_t testNum, test_definition testList[],
                   int forceNoContextCreation, cl_command_queue_properties queueProps);
