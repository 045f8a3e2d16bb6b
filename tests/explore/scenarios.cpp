// The scenarios: dma-bufs of the virtual Gen9 imported through the layer on
// the test ICD, acquire / write / release behind a user event, and what must
// hold after every schedule: the bytes the CPU reads from the dma-buf, every
// event's status, the fds and the ICD's buffers and events back to none.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include <cstring>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>

#include "explorer.hpp"
#include "test_dmabufs.hpp"

namespace explore {
namespace {

constexpr cl_platform_info kFaultState = 0x7E5A;  // tests/icd/testicd.hpp: calls, failed, live buffers, live events
constexpr size_t kBytes = 4096;
constexpr size_t kWords = kBytes / 4;

// One process per schedule: the dma-buf and the values written are globals.
std::optional<e2e::Dmabuf> dmabuf;
uint32_t values[3][kWords];  // v0 (the CPU's, before), v1, v2

// The open fds, each with what it points at.
std::map<int, std::string> open_fds() {
    std::map<int, std::string> out;
    if (DIR *d = opendir("/proc/self/fd")) {
        const int own = dirfd(d);
        while (dirent *e = readdir(d)) {
            if (e->d_name[0] == '.' || std::atoi(e->d_name) == own) continue;
            char target[256] = {};
            const ssize_t n = readlinkat(own, e->d_name, target, sizeof target - 1);
            out[std::atoi(e->d_name)] = n > 0 ? std::string(target, static_cast<size_t>(n)) : "?";
        }
        closedir(d);
    }
    return out;
}

void sync(int fd, uint64_t flags) {
    dma_buf_sync s{flags};
    ioctl(fd, DMA_BUF_IOCTL_SYNC, &s);
}

void *function(World &w, const char *name) { return clGetExtensionFunctionAddressForPlatform(w.platform, name); }

cl_int status(cl_event e) {
    cl_int s = CL_QUEUED;
    if (clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr) != CL_SUCCESS) return 1;
    return s;
}

// A consumer's view: POLLIN not ready means a writer's fence is pending.
bool writer_pending(int fd) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, 0) == 0;
}

bool layer_has_fence_source(World &w) {
    size_t bytes = 0;
    return clGetDeviceInfo(w.device, CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR, 0, nullptr, &bytes) ==
               CL_SUCCESS &&
           bytes > 0;
}

// The platform's device, a context, one in-order queue, a fresh dma-buf the
// CPU filled with v0, and the fd count before it.
void open_world(World &w) {
    for (size_t v = 0; v < 3; ++v)
        for (size_t i = 0; i < kWords; ++i) values[v][i] = static_cast<uint32_t>(0xA0000000u + (v << 24) + i);
    cl_int err = clGetDeviceIDs(w.platform, CL_DEVICE_TYPE_ALL, 1, &w.device, nullptr);
    if (err != CL_SUCCESS) return w.fail("clGetDeviceIDs: " + std::to_string(err));
    w.context = clCreateContext(nullptr, 1, &w.device, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) return w.fail("clCreateContext: " + std::to_string(err));
    w.queue = clCreateCommandQueueWithProperties(w.context, w.device, nullptr, &err);
    if (err != CL_SUCCESS) return w.fail("clCreateCommandQueueWithProperties: " + std::to_string(err));
    w.acquire = reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
        function(w, "clEnqueueAcquireExternalMemObjectsKHR"));
    w.release = reinterpret_cast<clEnqueueReleaseExternalMemObjectsKHR_fn>(
        function(w, "clEnqueueReleaseExternalMemObjectsKHR"));
    if (!w.acquire || !w.release) return w.fail("no acquire/release functions");
    w.facts["fences"] = layer_has_fence_source(w);
    w.fds_at_start = open_fds();
    dmabuf = e2e::make_dmabuf(kBytes);
    w.size = kBytes;
    w.view = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf->fd, 0);
    if (w.view == MAP_FAILED) return w.fail("mmap of the dma-buf failed");
    sync(dmabuf->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
    std::memcpy(w.view, values[0], kBytes);
    sync(dmabuf->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
}

void import(World &w, const std::string &name) {
    const int fd = fcntl(dmabuf->fd, F_DUPFD_CLOEXEC, 0);
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd), 0};
    cl_int err = CL_OUT_OF_RESOURCES;
    w.mems[name] = clCreateBufferWithProperties(w.context, props, CL_MEM_READ_WRITE, kBytes, nullptr, &err);
    if (err != CL_SUCCESS) {
        close(fd);
        w.fail("import " + name + ": " + std::to_string(err));
    }
}

// ---- the chunks ----------------------------------------------------------------------

Chunk user_event(const std::string &name) {
    return {"create user event " + name, [name](World &w) {
                cl_int err = CL_SUCCESS;
                w.events[name] = clCreateUserEvent(w.context, &err);
                if (err != CL_SUCCESS) w.fail("clCreateUserEvent: " + std::to_string(err));
            }};
}

Chunk acquire(const std::string &mem, const std::string &ev, const std::string &after) {
    return {"acquire " + mem + (after.empty() ? "" : " after " + after), [=](World &w) {
                cl_event wait = after.empty() ? nullptr : w.events[after];
                cl_event e = nullptr;
                const cl_int err = w.acquire(w.queue, 1, &w.mems[mem], wait ? 1 : 0, wait ? &wait : nullptr, &e);
                if (err != CL_SUCCESS) w.fail("acquire " + mem + ": " + std::to_string(err));
                w.events[ev] = e;
            }};
}

Chunk write(const std::string &mem, int v, const std::string &ev) {
    return {"write v" + std::to_string(v) + " to " + mem, [=](World &w) {
                cl_event e = nullptr;
                const cl_int err =
                    clEnqueueWriteBuffer(w.queue, w.mems[mem], CL_FALSE, 0, kBytes, values[v], 0, nullptr, &e);
                if (err != CL_SUCCESS) w.fail("write " + mem + ": " + std::to_string(err));
                w.events[ev] = e;
            }};
}

// Between two steps: while `acq` has completed (the dma-buf is OpenCL's) and
// `write` has not, an implicit-sync consumer must see a writer's fence.
void fence_while_writing(World &w, const std::string &acq, const std::string &write) {
    if (!w.facts["fences"]) return;
    auto a = w.events.find(acq), wr = w.events.find(write);
    if (a == w.events.end() || wr == w.events.end() || !a->second || !wr->second) return;
    if (status(a->second) != CL_COMPLETE || status(wr->second) <= CL_COMPLETE) return;
    if (!writer_pending(dmabuf->fd) && !w.facts["fence missed"]) {
        w.facts["fence missed"] = true;
        w.fail("the dma-buf has no writer's fence while " + write + " is still to run after " + acq + " completed");
    }
}

Chunk release(const std::string &mem, const std::string &ev) {
    return {"release " + mem, [=](World &w) {
                cl_event e = nullptr;
                const cl_int err = w.release(w.queue, 1, &w.mems[mem], 0, nullptr, &e);
                if (err != CL_SUCCESS) w.fail("release " + mem + ": " + std::to_string(err));
                w.events[ev] = e;
            }};
}

Chunk complete(const std::string &ev, cl_int st) {
    return {"user event " + ev + (st == CL_COMPLETE ? " complete" : " fails"), [=](World &w) {
                const cl_int err = clSetUserEventStatus(w.events[ev], st);
                if (err != CL_SUCCESS) w.fail("clSetUserEventStatus: " + std::to_string(err));
            }};
}

// clFinish, then the status each named event must have.
Chunk finish(std::map<std::string, bool> must_complete, bool must_succeed) {
    return {"clFinish", [=](World &w) {
                const cl_int err = clFinish(w.queue);
                if (must_succeed && err != CL_SUCCESS) w.fail("clFinish: " + std::to_string(err));
                for (const auto &[ev, ok] : must_complete) {
                    const cl_int s = status(w.events[ev]);
                    if (ok && s != CL_COMPLETE) w.fail("event " + ev + " ended " + std::to_string(s) + ", not complete");
                    if (!ok && s >= 0)
                        w.fail("event " + ev + " ended " + std::to_string(s) + ": its failure is not on it");
                }
            }};
}

Chunk release_everything() {
    return {"release every object", [](World &w) {
                for (auto &[name, e] : w.events)
                    if (e) clReleaseEvent(e);
                w.events.clear();
                for (auto &[name, m] : w.mems)
                    if (m) clReleaseMemObject(m);
                w.mems.clear();
                clReleaseCommandQueue(w.queue);
                clReleaseContext(w.context);
            }};
}

// After every step ended: the CPU reads `v` from the dma-buf; the fds and
// the ICD's buffers and events are back to none.
void check_end(World &w, int v) {
    sync(dmabuf->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
    size_t wrong = 0, first = kWords;
    const auto *words = static_cast<const uint32_t *>(w.view);
    for (size_t i = 0; i < kWords; ++i)
        if (words[i] != values[v][i] && wrong++ == 0) first = i;
    sync(dmabuf->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
    if (wrong) {
        char text[200];
        std::snprintf(text, sizeof text, "the dma-buf holds %zu words that are not v%d (word %zu: 0x%08x, want 0x%08x)",
                      wrong, v, first, words[first], values[v][first]);
        w.fail(text);
    }
    munmap(w.view, kBytes);
    dmabuf.reset();
    for (const auto &[fd, what] : open_fds())
        // The blitter's render node lives for the process (layer/i915/blt_engine.cpp).
        if ((!w.fds_at_start.count(fd) || w.fds_at_start.at(fd) != what) && what.find("render-node") == what.npos &&
            what.find("/dev/dri/") == what.npos)
            w.fail("fd " + std::to_string(fd) + " (" + what + ") is open at the end, not before");
    cl_ulong state[4] = {};
    if (clGetPlatformInfo(w.platform, kFaultState, sizeof state, state, nullptr) != CL_SUCCESS)
        w.fail("the test ICD's fault state is not there");
    else if (state[2] || state[3])
        w.fail("the ICD still has " + std::to_string(state[2]) + " buffers and " + std::to_string(state[3]) +
               " events");
}

std::vector<Scenario> make() {
    std::vector<Scenario> list;
    auto one_import = [](World &w) {
        open_world(w);
        if (w.failures().empty()) import(w, "X");
    };

    Scenario a;
    a.name = "a";
    a.summary = "one import, acquire/write v1/release behind a user event that completes";
    a.setup = one_import;
    a.program = [](World &) {
        return std::vector<Chunk>{user_event("ue"), acquire("X", "acq", "ue"), write("X", 1, "w"),
                                  release("X", "rel"), complete("ue", CL_COMPLETE),
                                  finish({{"acq", true}, {"w", true}, {"rel", true}}, true), release_everything()};
    };
    a.check = [](World &w) { check_end(w, 1); };
    a.between = [](World &w) { fence_while_writing(w, "acq", "w"); };
    list.push_back(a);

    Scenario a_late = a;
    a_late.name = "a-late-callbacks";
    a_late.summary = "a, each event callback delivered as a step of its own";
    a_late.icd_mode = "late_callbacks";
    list.push_back(a_late);

    // The failed acquire, then a round that must succeed (and fence the dma-buf).
    Scenario b;
    b.name = "b";
    b.summary = "a with the user event failing, then a second round that must succeed";
    b.setup = one_import;
    b.program = [](World &) {
        return std::vector<Chunk>{user_event("ue1"),
                                  acquire("X", "acq1", "ue1"),
                                  write("X", 1, "w1"),
                                  release("X", "rel1"),
                                  complete("ue1", -1),
                                  finish({{"acq1", false}}, false),
                                  user_event("ue2"),
                                  acquire("X", "acq2", "ue2"),
                                  write("X", 2, "w2"),
                                  release("X", "rel2"),
                                  complete("ue2", CL_COMPLETE),
                                  finish({{"acq2", true}, {"w2", true}, {"rel2", true}}, true),
                                  release_everything()};
    };
    b.check = [](World &w) { check_end(w, 2); };
    b.between = [](World &w) { fence_while_writing(w, "acq2", "w2"); };
    list.push_back(b);

    Scenario b_pocl = b;
    b_pocl.name = "b-no-terminated-callbacks";
    b_pocl.summary = "b on an ICD that terminates the queue behind a failure and calls none of their callbacks (PoCL)";
    b_pocl.icd_mode = "no_terminated_callbacks,fail_queue_behind";
    // The layer resolves the terminated step without its callback (a sweep
    // at clFinish and the failed user event; layer/core/host_step.cpp).
    b_pocl.between = [](World &w) { fence_while_writing(w, "acq2", "w2"); };
    list.push_back(b_pocl);

    // Two imports of one dma-buf on the copy route, releases pipelined.
    Scenario c;
    c.name = "c";
    c.summary = "copy route, imports X and Y of one dma-buf, two pipelined rounds on X behind a user event";
    c.icd_mode = "discrete";
    c.setup = [](World &w) {
        open_world(w);
        if (w.failures().empty()) import(w, "X");
        if (w.failures().empty()) import(w, "Y");
    };
    c.program = [](World &) {
        return std::vector<Chunk>{user_event("ue"),
                                  acquire("X", "acq1", "ue"),
                                  write("X", 1, "w1"),
                                  release("X", "rel1"),
                                  acquire("X", "acq2", ""),
                                  write("X", 2, "w2"),
                                  release("X", "rel2"),
                                  complete("ue", CL_COMPLETE),
                                  finish({{"acq1", true}, {"w1", true}, {"rel1", true}, {"acq2", true},
                                          {"w2", true}, {"rel2", true}},
                                         true),
                                  release_everything()};
    };
    c.check = [](World &w) { check_end(w, 2); };
    list.push_back(c);
    return list;
}

}  // namespace

const std::vector<Scenario> &scenarios() {
    static const std::vector<Scenario> list = make();
    return list;
}

}  // namespace explore
