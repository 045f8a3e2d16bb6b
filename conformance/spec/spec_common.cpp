#include "spec_common.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

namespace spec {

cl_int create_error(cl_context ctx, const std::vector<cl_mem_properties> &props, size_t size, cl_mem_flags flags,
                    void *host_ptr) {
    Created c = create(ctx, props, size, flags, host_ptr);
    if (!c.mem) return c.err;
    int fd = -1;
    for (size_t i = 0; i + 1 < props.size() && props[i]; i += 2) {
        if (props[i] == kDmaBuf) fd = static_cast<int>(props[i + 1]);
        if (props[i] == kDeviceList)
            while (i + 1 < props.size() && props[i + 1] != kDeviceListEnd) ++i;  // skip the list; i+=2 skips END
    }
    const int keep = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
    clReleaseMemObject(c.mem);
    if (keep >= 0) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (e2e::fd_is_open(fd) && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (!e2e::fd_is_open(fd)) dup3(keep, fd, O_CLOEXEC);
        close(keep);
    }
    return c.err == CL_SUCCESS ? 1 : c.err;
}

cl_int wait_status(cl_event e, int timeout_ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    cl_int s = event_status(e);
    while (s > CL_COMPLETE && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        s = event_status(e);
    }
    return s;
}

SubDevices::SubDevices(cl_device_id parent) {
    const cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_uint n = 0;
    if (clCreateSubDevices(parent, props, 0, nullptr, &n) != CL_SUCCESS || n < 2) return;
    devices.resize(n);
    if (clCreateSubDevices(parent, props, n, devices.data(), nullptr) != CL_SUCCESS) {
        devices.clear();
        return;
    }
    // Keep two; release the rest.
    for (size_t i = 2; i < devices.size(); ++i) clReleaseDevice(devices[i]);
    devices.resize(2);
}

SubDevices::~SubDevices() {
    for (cl_device_id d : devices) clReleaseDevice(d);
}

cl_context make_context(cl_platform_id platform, const std::vector<cl_device_id> &devices) {
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform), 0};
    cl_int err = CL_SUCCESS;
    cl_context ctx =
        clCreateContext(props, static_cast<cl_uint>(devices.size()), devices.data(), nullptr, nullptr, &err);
    if (!ctx) throw std::runtime_error("clCreateContext failed: " + std::to_string(err));
    return ctx;
}

cl_command_queue make_queue(cl_context ctx, cl_device_id dev, cl_command_queue_properties props) {
    cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, props, 0};
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, props ? qp : nullptr, &err);
    if (!q) throw std::runtime_error("clCreateCommandQueueWithProperties failed: " + std::to_string(err));
    return q;
}

SubDeviceContext::SubDeviceContext(cl_platform_id platform, const SubDevices &sd)
    : ctx(make_context(platform, sd.devices)) {
    q[0] = make_queue(ctx, sd.devices[0]);
    q[1] = make_queue(ctx, sd.devices[1]);
}

SubDeviceContext::~SubDeviceContext() {
    for (cl_command_queue queue : q)
        if (queue) clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
}

AbandonableImport::AbandonableImport(const ClEnv &env)
    : ctx(make_context(env.platform, {env.device})),
      q(make_queue(ctx, env.device)),
      buf(e2e::make_dmabuf(4096)),
      mem(import_buffer(ctx, buf)),
      gate(user_event(ctx)) {}

void AbandonableImport::finish_and_release() {
    clFinish(q);
    clReleaseEvent(gate);
    clReleaseMemObject(mem);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
}

std::vector<AcqRel> both_functions(const ClEnv &env) {
    REQUIRE(env.acquire != nullptr);
    REQUIRE(env.release != nullptr);
    return {{"clEnqueueAcquireExternalMemObjectsKHR", env.acquire},
            {"clEnqueueReleaseExternalMemObjectsKHR", env.release}};
}

}  // namespace spec
