// cl_khr_semaphore + cl_khr_external_semaphore_sync_fd from the layer
// (layer/sync/, docs/semaphores.md) on an ICD without them: PoCL on the host
// lane, with sync_fd export where a fence source exists (the virtual Gen9's
// sw_sync model under e2e-sim; real sw_sync or none in the VM).  Tag [semaphore].
#include <catch2/catch_test_macros.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/sync_file.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cl_fixture.hpp"
#include "layer_semaphores.hpp"
#include "event_info.hpp"
#include "layer/sync/semaphore_compat.h"
#include "test_dmabufs.hpp"

using namespace e2e;

namespace {

struct Sem : LayerSemaphores {
    using LayerSemaphores::LayerSemaphores;
    cl_semaphore_payload_khr payload(cl_semaphore_khr s) const {
        cl_semaphore_payload_khr v = 99;
        REQUIRE(info(s, CL_SEMAPHORE_PAYLOAD_KHR, sizeof v, &v, nullptr) == CL_SUCCESS);
        return v;
    }
};

// An array-valued query (its size asked first), each call REQUIREd.
template <typename T, typename Object, typename Info>
std::vector<T> info_array(cl_int(CL_API_CALL *get)(Object, Info, size_t, void *, size_t *), Object o, Info name) {
    size_t bytes = 0;
    REQUIRE(get(o, name, 0, nullptr, &bytes) == CL_SUCCESS);
    std::vector<T> v(bytes / sizeof(T));
    if (bytes) REQUIRE(get(o, name, bytes, v.data(), nullptr) == CL_SUCCESS);
    return v;
}
template <typename T>
std::vector<T> device_array(cl_device_id d, cl_device_info name) {
    return info_array<T>(clGetDeviceInfo, d, name);
}
template <typename T>
std::vector<T> platform_array(cl_platform_id p, cl_platform_info name) {
    return info_array<T>(clGetPlatformInfo, p, name);
}

bool can_export(const ClEnv &env) {
    return !device_array<cl_external_semaphore_handle_type_khr>(env.device, CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR)
                    .empty();
}
bool on_virtual_gen9() {
    const char *v = std::getenv("CLDMABUF_TEST_DMABUF");
    return v && !std::strcmp(v, "sim");
}
bool is_sync_file(int fd) {
    sync_file_info info{};
    return ioctl(fd, SYNC_IOC_FILE_INFO, &info) == 0;
}
bool readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

}  // namespace

TEST_CASE("semaphores: extension strings, versions and handle-type queries", "[semaphore]") {
    ClEnv env;
    Sem sem(env);
    const auto words = split_words(device_string(env.device, CL_DEVICE_EXTENSIONS));
    const auto pwords = split_words(platform_string(env.platform, CL_PLATFORM_EXTENSIONS));
    for (const char *name : {"cl_khr_semaphore", "cl_khr_external_semaphore", "cl_khr_external_semaphore_sync_fd"}) {
        CHECK(std::count(words.begin(), words.end(), name) == 1);
        CHECK(std::count(pwords.begin(), pwords.end(), name) == 1);
        bool versioned = false;
        for (const auto &e : device_array<cl_name_version>(env.device, CL_DEVICE_EXTENSIONS_WITH_VERSION))
            versioned = versioned || !std::strcmp(e.name, name);
        CHECK(versioned);
    }
    CHECK(device_array<cl_semaphore_type_khr>(env.device, CL_DEVICE_SEMAPHORE_TYPES_KHR) ==
          std::vector<cl_semaphore_type_khr>{CL_SEMAPHORE_TYPE_BINARY_KHR});
    CHECK(platform_array<cl_semaphore_type_khr>(env.platform, CL_PLATFORM_SEMAPHORE_TYPES_KHR) ==
          std::vector<cl_semaphore_type_khr>{CL_SEMAPHORE_TYPE_BINARY_KHR});
    const std::vector<cl_external_semaphore_handle_type_khr> sync_fd{CL_SEMAPHORE_HANDLE_SYNC_FD_KHR};
    CHECK(device_array<cl_external_semaphore_handle_type_khr>(env.device, CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR) ==
          sync_fd);
    CHECK(platform_array<cl_external_semaphore_handle_type_khr>(env.platform,
                                                                 CL_PLATFORM_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR) == sync_fd);
    // Export only where the layer has a fence to signal: the virtual Gen9 models sw_sync.
    const auto exports =
            device_array<cl_external_semaphore_handle_type_khr>(env.device, CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR);
    if (on_virtual_gen9()) CHECK(exports == sync_fd);
    const cl_semaphore_properties_khr props[] = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR,
                                                 CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR,
                                                 CL_SEMAPHORE_EXPORT_HANDLE_TYPES_LIST_END_KHR, 0};
    cl_int err = CL_SUCCESS;
    cl_semaphore_khr s = sem.create(env.context, props, &err);
    if (exports.empty()) {
        CHECK(err == CL_INVALID_DEVICE);  // honest: no export where nothing can signal a sync_file
        CHECK(s == nullptr);
    } else {
        CHECK(err == CL_SUCCESS);
        CHECK(sem.release(s) == CL_SUCCESS);
    }
}

TEST_CASE("semaphores: creation errors are the spec's and leave an imported fd with the application", "[semaphore]") {
    ClEnv env;
    Sem sem(env);
    cl_int err = CL_SUCCESS;
    auto create = [&](std::vector<cl_semaphore_properties_khr> p, cl_context ctx) {
        cl_semaphore_khr s = sem.create(ctx, p.empty() ? nullptr : p.data(), &err);
        CHECK(s == nullptr);
        return err;
    };
    const cl_semaphore_properties_khr T = CL_SEMAPHORE_TYPE_KHR, B = CL_SEMAPHORE_TYPE_BINARY_KHR;
    CHECK(create({T, B, 0}, nullptr) == CL_INVALID_CONTEXT);
    CHECK(create({}, env.context) == CL_INVALID_VALUE);
    CHECK(create({0}, env.context) == CL_INVALID_VALUE);
    CHECK(create({0x7fff, B, 0}, env.context) == CL_INVALID_PROPERTY);
    CHECK(create({T, 77, 0}, env.context) == CL_INVALID_PROPERTY);
    CHECK(create({T, B, T, B, 0}, env.context) == CL_INVALID_PROPERTY);
    const auto dev = reinterpret_cast<cl_semaphore_properties_khr>(env.device);
    CHECK(create({T, B, CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR, dev, dev, CL_SEMAPHORE_DEVICE_HANDLE_LIST_END_KHR, 0},
                 env.context) == CL_INVALID_DEVICE);
    CHECK(create({T, B, CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR, 0x1234, CL_SEMAPHORE_DEVICE_HANDLE_LIST_END_KHR, 0},
                 env.context) == CL_INVALID_DEVICE);
    CHECK(create({T, B, CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR, CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR,
                  CL_SEMAPHORE_EXPORT_HANDLE_TYPES_LIST_END_KHR, 0},
                 env.context) == CL_INVALID_PROPERTY);
    int pipe_fds[2];
    REQUIRE(pipe(pipe_fds) == 0);
    CHECK(create({T, B, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR, (cl_semaphore_properties_khr)pipe_fds[0], 0}, env.context) ==
          CL_INVALID_VALUE);
    CHECK(fd_is_open(pipe_fds[0]));  // a refused import leaves the fd alone
    close(pipe_fds[0]);
    close(pipe_fds[1]);
}

TEST_CASE("semaphores: info, retain/release, and the binary payload through signal and wait", "[semaphore]") {
    ClEnv env;
    Sem sem(env);
    const auto dev = reinterpret_cast<cl_semaphore_properties_khr>(env.device);
    const cl_semaphore_properties_khr props[] = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR,
                                                 CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR, dev,
                                                 CL_SEMAPHORE_DEVICE_HANDLE_LIST_END_KHR, 0};
    cl_int err = CL_SUCCESS;
    cl_semaphore_khr s = sem.create(env.context, props, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_context ctx = nullptr;
    CHECK(sem.info(s, CL_SEMAPHORE_CONTEXT_KHR, sizeof ctx, &ctx, nullptr) == CL_SUCCESS);
    CHECK(ctx == env.context);
    cl_semaphore_type_khr type = 0;
    CHECK(sem.info(s, CL_SEMAPHORE_TYPE_KHR, sizeof type, &type, nullptr) == CL_SUCCESS);
    CHECK(type == CL_SEMAPHORE_TYPE_BINARY_KHR);
    size_t bytes = 0;
    CHECK(sem.info(s, CL_SEMAPHORE_PROPERTIES_KHR, 0, nullptr, &bytes) == CL_SUCCESS);
    std::vector<cl_semaphore_properties_khr> echoed(bytes / sizeof(cl_semaphore_properties_khr));
    CHECK(sem.info(s, CL_SEMAPHORE_PROPERTIES_KHR, bytes, echoed.data(), nullptr) == CL_SUCCESS);
    CHECK(echoed == std::vector<cl_semaphore_properties_khr>(std::begin(props), std::end(props)));
    cl_device_id listed = nullptr;
    CHECK(sem.info(s, CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR, sizeof listed, &listed, nullptr) == CL_SUCCESS);
    CHECK(listed == env.device);
    cl_bool exportable = CL_TRUE;
    CHECK(sem.info(s, CL_SEMAPHORE_EXPORTABLE_KHR, sizeof exportable, &exportable, nullptr) == CL_SUCCESS);
    CHECK(exportable == CL_FALSE);
    CHECK(sem.info(s, 0x7fff, sizeof type, &type, nullptr) == CL_INVALID_VALUE);
    CHECK(sem.info(s, CL_SEMAPHORE_TYPE_KHR, 1, &type, nullptr) == CL_INVALID_VALUE);

    CHECK(sem.retain(s) == CL_SUCCESS);
    cl_uint refs = 0;
    CHECK(sem.info(s, CL_SEMAPHORE_REFERENCE_COUNT_KHR, sizeof refs, &refs, nullptr) == CL_SUCCESS);
    CHECK(refs == 2);
    CHECK(sem.release(s) == CL_SUCCESS);

    cl_semaphore_khr unlisted = sem.make(env);
    listed = nullptr;
    CHECK(sem.info(unlisted, CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR, sizeof listed, &listed, nullptr) == CL_SUCCESS);
    CHECK(listed == env.device);  // the one-device context's
    CHECK(sem.release(unlisted) == CL_SUCCESS);

    CHECK(sem.payload(s) == 0);
    cl_event sig = nullptr, wt = nullptr;
    REQUIRE(sem.signal(env.queue, 1, &s, nullptr, 0, nullptr, &sig) == CL_SUCCESS);
    CHECK(sem.signal(env.queue, 1, &s, nullptr, 0, nullptr, nullptr) == CL_INVALID_OPERATION);  // already pending
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(sem.payload(s) == 1);
    CHECK(type_of(sig) == CL_COMMAND_SEMAPHORE_SIGNAL_KHR);
    CHECK(status_of(sig) == CL_COMPLETE);
    REQUIRE(sem.wait(env.queue, 1, &s, nullptr, 0, nullptr, &wt) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &wt) == CL_SUCCESS);
    CHECK(type_of(wt) == CL_COMMAND_SEMAPHORE_WAIT_KHR);
    CHECK(sem.payload(s) == 0);
    CHECK(sem.wait(env.queue, 1, &s, nullptr, 0, nullptr, nullptr) == CL_INVALID_OPERATION);  // nothing to wait for
    CHECK(sem.wait(env.queue, 0, &s, nullptr, 0, nullptr, nullptr) == CL_INVALID_VALUE);
    CHECK(sem.signal(nullptr, 1, &s, nullptr, 0, nullptr, nullptr) == CL_INVALID_COMMAND_QUEUE);
    clReleaseEvent(sig);
    clReleaseEvent(wt);
    CHECK(sem.release(s) == CL_SUCCESS);
    CHECK(sem.release(s) == CL_INVALID_SEMAPHORE_KHR);
    CHECK(sem.info(s, CL_SEMAPHORE_TYPE_KHR, sizeof type, &type, nullptr) == CL_INVALID_SEMAPHORE_KHR);
}

TEST_CASE("semaphores: a wait on another queue holds that queue until the signal runs", "[semaphore]") {
    ClEnv env;
    Sem sem(env);
    cl_semaphore_khr s = sem.make(env);
    cl_command_queue other = env.make_queue();
    cl_event gate = env.make_user_event();
    cl_event sig = nullptr, wt = nullptr, marker = nullptr;
    REQUIRE(sem.signal(env.queue, 1, &s, nullptr, 1, &gate, &sig) == CL_SUCCESS);
    REQUIRE(sem.wait(other, 1, &s, nullptr, 0, nullptr, &wt) == CL_SUCCESS);
    REQUIRE(clEnqueueMarkerWithWaitList(other, 0, nullptr, &marker) == CL_SUCCESS);
    CHECK(status_of(wt) > CL_COMPLETE);      // the signal cannot have run: its wait list is open
    CHECK(status_of(marker) > CL_COMPLETE);  // and commands behind the wait are held
    REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &marker) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &sig) == CL_SUCCESS);  // its barrier may retire after the wait did
    CHECK(status_of(sig) == CL_COMPLETE);
    CHECK(status_of(wt) == CL_COMPLETE);
    for (cl_event e : {gate, sig, wt, marker}) clReleaseEvent(e);
    clReleaseCommandQueue(other);
    CHECK(sem.release(s) == CL_SUCCESS);
}

TEST_CASE("semaphores: a signal that never runs fails the wait after the fence timeout, without hanging",
          "[semaphore]") {
    ClEnv env;
    Sem sem(env);
    cl_semaphore_khr s = sem.make(env);
    cl_command_queue other = env.make_queue();
    cl_event gate = env.make_user_event();
    cl_event wt = nullptr;
    REQUIRE(sem.signal(env.queue, 1, &s, nullptr, 1, &gate, nullptr) == CL_SUCCESS);
    REQUIRE(sem.wait(other, 1, &s, nullptr, 0, nullptr, &wt) == CL_SUCCESS);
    CHECK(clFinish(other) == CL_OUT_OF_RESOURCES);  // bounded by CLDMABUF_FENCE_TIMEOUT_MS
    CHECK(status_of(wt) == CL_OUT_OF_RESOURCES);
    REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    for (cl_event e : {gate, wt}) clReleaseEvent(e);
    clReleaseCommandQueue(other);
    CHECK(sem.release(s) == CL_SUCCESS);
}

TEST_CASE("semaphores: sync_fd export of a pending signal, import into another semaphore, re-import",
          "[semaphore]") {
    ClEnv env;
    if (!can_export(env)) SKIP("no sync_fd export here (neither sw_sync nor vgem)");
    Sem sem(env);
    const int fds_before = count_open_fds();
    const std::string fd_list_before = cldmabuf::test::describe_open_fds();
    cl_semaphore_khr a = sem.make(env, /*exportable=*/true);
    int fd = -1;
    size_t size = 0;
    CHECK(sem.handle(a, env.device, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR, sizeof fd, &fd, &size) == CL_INVALID_OPERATION);
    cl_event gate = env.make_user_event();
    REQUIRE(sem.signal(env.queue, 1, &a, nullptr, 1, &gate, nullptr) == CL_SUCCESS);
    CHECK(sem.handle(a, env.device, CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR, sizeof fd, &fd, nullptr) == CL_INVALID_VALUE);
    CHECK(sem.handle(a, env.device, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR, 1, &fd, nullptr) == CL_INVALID_VALUE);
    CHECK(sem.handle(a, nullptr, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR, sizeof fd, &fd, nullptr) == CL_INVALID_DEVICE);
    CHECK(sem.handle(a, env.device, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR, 0, nullptr, &size) == CL_SUCCESS);
    CHECK(size == sizeof(int));
    REQUIRE(sem.handle(a, env.device, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR, sizeof fd, &fd, nullptr) == CL_SUCCESS);
    CHECK(is_sync_file(fd));
    CHECK_FALSE(readable(fd));  // the signal has not run
    CHECK(sem.payload(a) == 0);  // the export took the signal (copy transference)

    cl_semaphore_khr b = sem.make(env, false, fd);  // owns fd now
    cl_event wt = nullptr;
    REQUIRE(sem.wait(env.queue, 1, &b, nullptr, 0, nullptr, &wt) == CL_SUCCESS);
    REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &wt) == CL_SUCCESS);
    CHECK(status_of(wt) == CL_COMPLETE);

    // Re-import into b: a second exported signal.
    REQUIRE(sem.signal(env.queue, 1, &a, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    int fd2 = -1;
    REQUIRE(sem.handle(a, env.device, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR, sizeof fd2, &fd2, nullptr) == CL_SUCCESS);
    CHECK(sem.reimport(b, nullptr, fd2) == CL_SUCCESS);
    CHECK(sem.reimport(a, nullptr, fd2) == CL_INVALID_SEMAPHORE_KHR);  // a imported nothing
    CHECK(sem.reimport(b, nullptr, -1) == CL_INVALID_VALUE);
    REQUIRE(sem.wait(env.queue, 1, &b, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    clReleaseEvent(gate);
    clReleaseEvent(wt);
    CHECK(sem.release(a) == CL_SUCCESS);
    CHECK(sem.release(b) == CL_SUCCESS);
    // Every sync_file and timeline closed, once the worker dropped the steps
    // (it may still be unwinding the last one when clFinish returns).
    for (int i = 0; i < 400 && count_open_fds() != fds_before; ++i) usleep(5000);
    INFO("open before:\n" << fd_list_before << "open after:\n" << cldmabuf::test::describe_open_fds());
    CHECK(count_open_fds() == fds_before);
}

TEST_CASE("semaphores: a dma-buf's fences as a semaphore, and a signal put back into the dma-buf", "[semaphore]") {
    REQUIRE_DMABUF();
    ClEnv env;
    if (!can_export(env)) SKIP("no sync_fd export here (neither sw_sync nor vgem)");
    Sem sem(env);
    Dmabuf buf = make_dmabuf(4096);
    // A producer's implicit fences, explicit: DMA_BUF_IOCTL_EXPORT_SYNC_FILE (Linux >= 6.0).
    dma_buf_export_sync_file exp{};
    exp.flags = DMA_BUF_SYNC_WRITE;
    if (ioctl(buf.fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &exp) != 0) SKIP("exporter without EXPORT_SYNC_FILE");
    cl_semaphore_khr in = sem.make(env, false, exp.fd);
    REQUIRE(sem.wait(env.queue, 1, &in, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);  // an idle buffer's fences are signalled

    // The layer's signal as the dma-buf's write fence: DMA_BUF_IOCTL_IMPORT_SYNC_FILE.
    cl_semaphore_khr out = sem.make(env, true);
    cl_event gate = env.make_user_event();
    REQUIRE(sem.signal(env.queue, 1, &out, nullptr, 1, &gate, nullptr) == CL_SUCCESS);
    int fd = -1;
    REQUIRE(sem.handle(out, env.device, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR, sizeof fd, &fd, nullptr) == CL_SUCCESS);
    dma_buf_import_sync_file imp{};
    imp.flags = DMA_BUF_SYNC_WRITE;
    imp.fd = fd;
    REQUIRE(ioctl(buf.fd, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &imp) == 0);
    close(fd);
    pollfd p{buf.fd, POLLIN, 0};
    CHECK(poll(&p, 1, 0) == 0);  // readers of the dma-buf now wait for the semaphore's signal
    REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(poll(&p, 1, 5000) == 1);
    clReleaseEvent(gate);
    CHECK(sem.release(in) == CL_SUCCESS);
    CHECK(sem.release(out) == CL_SUCCESS);
}

TEST_CASE("semaphores: released right after enqueueing, another context's queue, the platform-less lookup",
          "[semaphore]") {
    ClEnv env;
    Sem sem(env);
    CHECK(reinterpret_cast<void *>(sem.create) == clGetExtensionFunctionAddress("clCreateSemaphoreWithPropertiesKHR"));
    cl_semaphore_khr s = sem.make(env);
    cl_int err = CL_SUCCESS;
    cl_context other_ctx = clCreateContext(nullptr, 1, &env.device, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_command_queue other_q = clCreateCommandQueueWithProperties(other_ctx, env.device, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(sem.signal(other_q, 1, &s, nullptr, 0, nullptr, nullptr) == CL_INVALID_CONTEXT);
    clReleaseCommandQueue(other_q);
    clReleaseContext(other_ctx);

    // The steps keep what they need: the application's last reference can go at once.
    cl_event gate = env.make_user_event();
    cl_event wt = nullptr;
    REQUIRE(sem.signal(env.queue, 1, &s, nullptr, 1, &gate, nullptr) == CL_SUCCESS);
    REQUIRE(sem.wait(env.queue, 1, &s, nullptr, 0, nullptr, &wt) == CL_SUCCESS);
    CHECK(sem.release(s) == CL_SUCCESS);
    REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &wt) == CL_SUCCESS);
    CHECK(status_of(wt) == CL_COMPLETE);
    clReleaseEvent(gate);
    clReleaseEvent(wt);
}
