// The stand-in harness's run loop, logging and helpers (harness/*.h here).
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness/alloc.h"
#include "harness/testHarness.h"
#include "test_dmabufs.hpp"

namespace {

std::string last_line;  // the latest log line: a skipped test's reason

void vlog(const char *format, va_list ap) {
    char buf[2048];
    vsnprintf(buf, sizeof buf, format, ap);
    fputs(buf, stdout);
    fflush(stdout);
    std::string s(buf);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    if (!s.empty()) last_line = s;
}

std::string platform_name(cl_platform_id p) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
    return name;
}

cl_device_type device_type_from_env() {
    const char *t = getenv("CL_DEVICE_TYPE");
    if (!t) return CL_DEVICE_TYPE_DEFAULT;
    std::string s(t);
    if (s == "cpu" || s == "CL_DEVICE_TYPE_CPU") return CL_DEVICE_TYPE_CPU;
    if (s == "gpu" || s == "CL_DEVICE_TYPE_GPU") return CL_DEVICE_TYPE_GPU;
    if (s == "accelerator" || s == "CL_DEVICE_TYPE_ACCELERATOR") return CL_DEVICE_TYPE_ACCELERATOR;
    if (s == "all" || s == "CL_DEVICE_TYPE_ALL") return CL_DEVICE_TYPE_ALL;
    return CL_DEVICE_TYPE_DEFAULT;
}

// The platform: CLDMABUF_TEST_PLATFORM (substring of the name) first, else
// CL_PLATFORM_INDEX (default 0).
cl_platform_id pick_platform() {
    cl_uint n = 0;
    if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) return nullptr;
    std::vector<cl_platform_id> all(n);
    clGetPlatformIDs(n, all.data(), nullptr);
    if (const char *want = getenv("CLDMABUF_TEST_PLATFORM")) {
        for (cl_platform_id p : all)
            if (platform_name(p).find(want) != std::string::npos) return p;
        return nullptr;
    }
    const char *idx = getenv("CL_PLATFORM_INDEX");
    cl_uint i = idx ? static_cast<cl_uint>(atoi(idx)) : 0;
    return i < n ? all[i] : nullptr;
}

}  // namespace

test_registry &test_registry::getInstance() {
    static test_registry r;
    return r;
}

void log_info(const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    vlog(format, ap);
    va_end(ap);
}

void log_error(const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    vlog(format, ap);
    va_end(ap);
}

const char *IGetErrorString(int e) {
    switch (e) {
#define NAME(x) \
    case x: return #x;
        NAME(CL_SUCCESS) NAME(CL_DEVICE_NOT_FOUND) NAME(CL_OUT_OF_RESOURCES) NAME(CL_OUT_OF_HOST_MEMORY)
        NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE) NAME(CL_INVALID_VALUE) NAME(CL_INVALID_DEVICE_TYPE)
        NAME(CL_INVALID_PLATFORM) NAME(CL_INVALID_DEVICE) NAME(CL_INVALID_CONTEXT) NAME(CL_INVALID_QUEUE_PROPERTIES)
        NAME(CL_INVALID_COMMAND_QUEUE) NAME(CL_INVALID_HOST_PTR) NAME(CL_INVALID_MEM_OBJECT)
        NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) NAME(CL_INVALID_IMAGE_SIZE) NAME(CL_INVALID_EVENT_WAIT_LIST)
        NAME(CL_INVALID_EVENT) NAME(CL_INVALID_OPERATION) NAME(CL_INVALID_BUFFER_SIZE)
        NAME(CL_INVALID_PROPERTY) NAME(CL_INVALID_IMAGE_DESCRIPTOR) NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED)
        NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        NAME(CL_INVALID_KERNEL) NAME(CL_INVALID_PROGRAM_EXECUTABLE) NAME(CL_BUILD_PROGRAM_FAILURE)
#undef NAME
        default: {
            static thread_local char other[32];
            snprintf(other, sizeof other, "error %d", e);
            return other;
        }
    }
}

bool is_extension_available(cl_device_id device, const char *ext) {
    size_t n = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, nullptr, &n) != CL_SUCCESS) return false;
    std::string s(n, '\0');
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, n, s.data(), nullptr) != CL_SUCCESS) return false;
    s = " " + std::string(s.c_str()) + " ";
    return s.find(" " + std::string(ext) + " ") != std::string::npos;
}

int create_single_kernel_helper(cl_context context, cl_program *out_program, cl_kernel *out_kernel,
                                unsigned int num_sources, const char **sources, const char *kernel_name,
                                const char *build_options) {
    cl_int err = CL_SUCCESS;
    *out_program = clCreateProgramWithSource(context, num_sources, sources, nullptr, &err);
    if (err != CL_SUCCESS) return err;
    err = clBuildProgram(*out_program, 0, nullptr, build_options, nullptr, nullptr);
    if (err != CL_SUCCESS) {
        cl_uint nd = 0;
        clGetProgramInfo(*out_program, CL_PROGRAM_NUM_DEVICES, sizeof nd, &nd, nullptr);
        std::vector<cl_device_id> devs(nd);
        clGetProgramInfo(*out_program, CL_PROGRAM_DEVICES, nd * sizeof(cl_device_id), devs.data(), nullptr);
        for (cl_device_id d : devs) {
            size_t len = 0;
            clGetProgramBuildInfo(*out_program, d, CL_PROGRAM_BUILD_LOG, 0, nullptr, &len);
            std::string log(len, '\0');
            clGetProgramBuildInfo(*out_program, d, CL_PROGRAM_BUILD_LOG, len, log.data(), nullptr);
            log_error("build log: %s\n", log.c_str());
        }
        return err;
    }
    *out_kernel = clCreateKernel(*out_program, kernel_name, &err);
    return err;
}

int allocate_dma_buf(uint64_t size, dma_buf_heap_type) {
    if (!e2e::have_dmabuf()) {
        log_error("no dma-buf exporter on this machine (CLDMABUF_TEST_DMABUF=heap|udmabuf|vgem|sim)\n");
        return TEST_SKIPPED_ITSELF;
    }
    try {
        return e2e::make_dmabuf(size).release_fd();
    } catch (const std::exception &e) {
        log_error("allocating a %llu-byte dma-buf (%s) failed: %s\n", static_cast<unsigned long long>(size),
                  e2e::dmabuf_source().c_str(), e.what());
        return -1;
    }
}

int runTestHarness(int argc, const char *argv[], size_t testNum, test_definition testList[], int,
                   cl_command_queue_properties queueProps) {
    std::vector<const char *> wanted;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--list")) {
            for (size_t t = 0; t < testNum; ++t) printf("%s\n", testList[t].name);
            return EXIT_SUCCESS;
        }
        wanted.push_back(argv[i]);
    }
    // The selection, in registration order; a name that matches nothing is
    // an error for the whole run (the CTS's rule).
    std::vector<size_t> run;
    for (const char *w : wanted) {
        bool found = false;
        for (size_t t = 0; t < testNum; ++t) {
            const std::string name = testList[t].name;
            const size_t len = strlen(w);
            const bool prefix = len && w[len - 1] == '*' && name.compare(0, len - 1, w, len - 1) == 0;
            if (name == w || prefix) found = true, run.push_back(t);
        }
        if (!found) {
            log_error("Test %s not found\n", w);
            return EXIT_FAILURE;
        }
    }
    if (wanted.empty())
        for (size_t t = 0; t < testNum; ++t) run.push_back(t);

    cl_platform_id platform = pick_platform();
    cl_device_id device = nullptr;
    if (!platform || clGetDeviceIDs(platform, device_type_from_env(), 1, &device, nullptr) != CL_SUCCESS) {
        log_error("no OpenCL platform or device (CLDMABUF_TEST_PLATFORM, CL_PLATFORM_INDEX, CL_DEVICE_TYPE)\n");
        printf("Test failed while initialization\n");
        return EXIT_FAILURE;
    }
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    if (!context) {
        log_error("clCreateContext: %s\n", IGetErrorString(err));
        return EXIT_FAILURE;
    }
    const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, queueProps, 0};
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, queueProps ? props : nullptr, &err);
    if (!queue) {
        log_error("clCreateCommandQueueWithProperties: %s\n", IGetErrorString(err));
        clReleaseContext(context);
        return EXIT_FAILURE;
    }
    log_info("platform: %s\n", platform_name(platform).c_str());

    size_t passed = 0, failed = 0, skipped = 0;
    std::vector<std::pair<std::string, std::string>> skip_reasons;
    for (size_t t : run) {
        const char *name = testList[t].name;
        printf("%s...\n", name);
        fflush(stdout);
        last_line.clear();
        const int r = testList[t].func(device, context, queue, 4096);
        if (r == TEST_SKIPPED_ITSELF || r == TEST_SKIP) {
            ++skipped;
            printf("%s test not supported\n", name);
            skip_reasons.emplace_back(name, last_line.empty() ? "(no message)" : last_line);
        } else if (r == TEST_PASS && clFinish(queue) == CL_SUCCESS) {
            ++passed;
            printf("%s passed\n", name);
        } else {
            ++failed;
            printf("%s FAILED\n", name);
        }
        fflush(stdout);
    }
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    if (failed) printf("FAILED %zu of %zu tests.\n", failed, run.size());
    else printf("PASSED %zu of %zu tests.\n", passed + skipped, run.size());
    // For scripts/catch2-tally (the lanes' counts): each skip with its
    // reason, then the totals in Catch2's words.
    for (const auto &[name, why] : skip_reasons) printf("%s: SKIPPED:\n  %s\n", name.c_str(), why.c_str());
    printf("\ntest cases: %zu | %zu passed | %zu failed | %zu skipped\n", run.size(), passed, failed, skipped);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
