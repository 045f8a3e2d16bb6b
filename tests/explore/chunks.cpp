// The scenarios' world, chunks and checks (chunks.hpp).
#include "chunks.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "test_dmabufs.hpp"
#include "vgen9_control.hpp"

namespace explore {

uint32_t values[kValues][kWords];

namespace {

constexpr cl_platform_info kFaultState = 0x7E5A;  // tests/icd/testicd.hpp: calls, failed, live buffers, live events
// One process per schedule: the dma-buf is a global.
std::optional<e2e::Dmabuf> dmabuf;

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

cl_command_queue queue_of(World &w, int q) { return q ? w.other : w.queue; }

// The events named in `after`, comma-separated (a wait list).
std::vector<cl_event> wait_list(World &w, const std::string &after) {
    std::vector<cl_event> out;
    size_t at = 0;
    while (at < after.size()) {
        const size_t comma = std::min(after.find(',', at), after.size());
        out.push_back(w.events[after.substr(at, comma - at)]);
        at = comma + 1;
    }
    return out;
}

}  // namespace

cl_int status(cl_event e) {
    cl_int s = CL_QUEUED;
    if (clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr) != CL_SUCCESS) return 1;
    return s;
}

std::array<cl_ulong, CL_STATS_COUNT_CLDMABUF> layer_stats(World &w) {
    std::array<cl_ulong, CL_STATS_COUNT_CLDMABUF> s{};
    if (clGetPlatformInfo(w.platform, CL_PLATFORM_STATS_CLDMABUF, sizeof s, s.data(), nullptr) != CL_SUCCESS)
        w.fail("the layer's counters (CL_PLATFORM_STATS_CLDMABUF) are not there");
    return s;
}

uint64_t sync_ends() {
    uint64_t starts = 0, ends = 0;
    if (cldmabuf::test::vgen9().dmabuf_syncs) cldmabuf::test::vgen9().dmabuf_syncs(&starts, &ends);
    return ends;
}

void open_world(World &w) {
    for (size_t v = 0; v < kValues; ++v)
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

int dmabuf_fd() { return dmabuf ? dmabuf->fd : -1; }

void note_open_fds(World &w) { w.fds_at_start = open_fds(); }

void open_second_queue(World &w, bool out_of_order) {
    cl_int err = CL_OUT_OF_RESOURCES;
    const cl_queue_properties ooo[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    w.other = clCreateCommandQueueWithProperties(w.context, w.device, out_of_order ? ooo : nullptr, &err);
    if (err != CL_SUCCESS) w.fail("the second queue: " + std::to_string(err));
}

void import(World &w, const std::string &name, cl_mem_flags flags) {
    const int fd = fcntl(dmabuf->fd, F_DUPFD_CLOEXEC, 0);
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd), 0};
    cl_int err = CL_OUT_OF_RESOURCES;
    w.mems[name] = clCreateBufferWithProperties(w.context, props, flags, kBytes, nullptr, &err);
    if (err != CL_SUCCESS) {
        close(fd);
        w.fail("import " + name + ": " + std::to_string(err));
    }
}

void plain_buffer(World &w, const std::string &name) {
    cl_int err = CL_OUT_OF_RESOURCES;
    w.mems[name] = clCreateBuffer(w.context, CL_MEM_READ_WRITE, kBytes, nullptr, &err);
    if (err != CL_SUCCESS) w.fail("buffer " + name + ": " + std::to_string(err));
}

cl_ulong icd_live_events(World &w) {
    cl_ulong state[4] = {};
    if (clGetPlatformInfo(w.platform, kFaultState, sizeof state, state, nullptr) != CL_SUCCESS)
        w.fail("the test ICD's fault state is not there");
    return state[3];
}

// ---- the chunks ----------------------------------------------------------------------

Chunk user_event(const std::string &name) {
    return {"create user event " + name, [name](World &w) {
                cl_int err = CL_SUCCESS;
                w.events[name] = clCreateUserEvent(w.context, &err);
                if (err != CL_SUCCESS) w.fail("clCreateUserEvent: " + std::to_string(err));
            }};
}

Chunk acquire(const std::string &mem, const std::string &ev, const std::string &after, int q) {
    return {"acquire " + mem + (q ? " on q1" : "") + (after.empty() ? "" : " after " + after), [=](World &w) {
                const std::vector<cl_event> waits = wait_list(w, after);
                cl_event e = nullptr;
                const cl_int err = w.acquire(queue_of(w, q), 1, &w.mems[mem], static_cast<cl_uint>(waits.size()),
                                             waits.empty() ? nullptr : waits.data(), &e);
                if (err != CL_SUCCESS) w.fail("acquire " + mem + ": " + std::to_string(err));
                w.events[ev] = e;
            }};
}

Chunk write(const std::string &mem, int v, const std::string &ev, int q, size_t first, size_t count,
            const std::string &after) {
    const std::string words =
        count == kWords ? "" : " words " + std::to_string(first) + ".." + std::to_string(first + count - 1);
    return {"write v" + std::to_string(v) + words + " to " + mem + (q ? " on q1" : "") +
                (after.empty() ? "" : " after " + after),
            [=](World &w) {
                const std::vector<cl_event> waits = wait_list(w, after);
                cl_event e = nullptr;
                const cl_int err = clEnqueueWriteBuffer(queue_of(w, q), w.mems[mem], CL_FALSE, first * 4, count * 4,
                                                        values[v] + first, static_cast<cl_uint>(waits.size()),
                                                        waits.empty() ? nullptr : waits.data(), &e);
                if (err != CL_SUCCESS) w.fail("write " + mem + ": " + std::to_string(err));
                w.events[ev] = e;
            }};
}

void fence_while_writing(World &w, const std::string &acq, const std::string &write, const std::string &rel) {
    if (!w.facts["fences"]) return;
    if (!rel.empty() && !w.events.count(rel)) return;
    auto a = w.events.find(acq), wr = w.events.find(write);
    if (a == w.events.end() || wr == w.events.end() || !a->second || !wr->second) return;
    if (status(a->second) != CL_COMPLETE || status(wr->second) <= CL_COMPLETE) return;
    if (!writer_pending(dmabuf->fd) && !w.facts["fence missed"]) {
        w.facts["fence missed"] = true;
        w.fail("the dma-buf has no writer's fence while " + write + " is still to run after " + acq + " completed");
    }
}

Chunk release(const std::string &mem, const std::string &ev, int q, const std::string &after) {
    return {"release " + mem + (q ? " on q1" : "") + (after.empty() ? "" : " after " + after), [=](World &w) {
                const std::vector<cl_event> waits = wait_list(w, after);
                cl_event e = nullptr;
                const cl_int err = w.release(queue_of(w, q), 1, &w.mems[mem], static_cast<cl_uint>(waits.size()),
                                             waits.empty() ? nullptr : waits.data(), &e);
                if (err != CL_SUCCESS) w.fail("release " + mem + ": " + std::to_string(err));
                w.events[ev] = e;
            }};
}

Chunk import_now(const std::string &mem) {
    return {"import " + mem, [=](World &w) { import(w, mem); }};
}

Chunk release_import(const std::string &mem) {
    return {"release import " + mem, [=](World &w) {
                clReleaseMemObject(w.mems[mem]);
                w.mems.erase(mem);
            }};
}

// An acquire with no wait list on a queue that clFinish left idle: done at
// once, the queue known idle (quiet), as on a queue that never failed.
Chunk fast_acquire(const std::string &mem, const std::string &ev, bool quiet_too) {
    return {"acquire " + mem + " (must be fast)", [=](World &w) {
                const auto before = layer_stats(w);
                cl_event e = nullptr;
                const cl_int err = w.acquire(w.queue, 1, &w.mems[mem], 0, nullptr, &e);
                if (err != CL_SUCCESS) w.fail("acquire " + mem + ": " + std::to_string(err));
                w.events[ev] = e;
                const auto after = layer_stats(w);
                const cl_ulong fast = after[CL_STATS_FAST_HANDOFFS_CLDMABUF] - before[CL_STATS_FAST_HANDOFFS_CLDMABUF];
                const cl_ulong quiet =
                    after[CL_STATS_QUIET_HANDOFFS_CLDMABUF] - before[CL_STATS_QUIET_HANDOFFS_CLDMABUF];
                const cl_ulong queued =
                    after[CL_STATS_QUEUED_HANDOFFS_CLDMABUF] - before[CL_STATS_QUEUED_HANDOFFS_CLDMABUF];
                if (fast != 1 || (quiet_too && quiet != 1))
                    w.fail("acquire " + mem + " was not fast" + (quiet_too ? " on the idle queue" : "") +
                           ": fast handoffs +" +
                           std::to_string(fast) + ", quiet +" + std::to_string(quiet) + ", queued +" +
                           std::to_string(queued));
            }};
}

Chunk complete(const std::string &ev, cl_int st) {
    return {"user event " + ev + (st == CL_COMPLETE ? " complete" : " fails"), [=](World &w) {
                const cl_int err = clSetUserEventStatus(w.events[ev], st);
                if (err != CL_SUCCESS) w.fail("clSetUserEventStatus: " + std::to_string(err));
            }};
}

Chunk finish(std::map<std::string, bool> must_complete, bool must_succeed, int q) {
    return {q ? "clFinish q1" : "clFinish", [=](World &w) {
                const cl_int err = clFinish(queue_of(w, q));
                if (must_succeed && err != CL_SUCCESS) w.fail("clFinish: " + std::to_string(err));
                for (const auto &[ev, ok] : must_complete) {
                    const cl_int s = status(w.events[ev]);
                    if (ok && s != CL_COMPLETE) w.fail("event " + ev + " ended " + std::to_string(s) + ", not complete");
                    if (!ok && s >= 0)
                        w.fail("event " + ev + " ended " + std::to_string(s) + ": its failure is not on it");
                }
            }};
}

Chunk finish_reporting(const std::string &ev) {
    return {"clFinish reporting " + ev + "'s failure", [=](World &w) {
                const cl_int err = clFinish(w.queue);
                if (err == CL_SUCCESS) w.fail("clFinish succeeded: " + ev + "'s failure was not reported");
                if (status(w.events[ev]) >= 0) w.fail("event " + ev + " did not fail");
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
                if (w.other) clReleaseCommandQueue(w.other);
                clReleaseCommandQueue(w.queue);
                clReleaseContext(w.context);
            }};
}

void check_end(World &w, const uint32_t *expected) {
    sync(dmabuf->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
    size_t wrong = 0, first = kWords;
    const auto *words = static_cast<const uint32_t *>(w.view);
    for (size_t i = 0; i < kWords; ++i)
        if (words[i] != expected[i] && wrong++ == 0) first = i;
    sync(dmabuf->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
    if (wrong) {
        char text[200];
        std::snprintf(text, sizeof text, "the dma-buf holds %zu words not as expected (word %zu: 0x%08x, want 0x%08x)",
                      wrong, first, words[first], expected[first]);
        w.fail(text);
    }
    munmap(w.view, kBytes);
    dmabuf.reset();
    // A parked mapping's fd is the cache's until its reaper (every 50 ms)
    // sees only the cache's references left.
    for (int i = 0; i < 100 && layer_stats(w)[CL_STATS_PARKED_MAPPINGS_CLDMABUF]; ++i) usleep(20000);
    const auto stats = layer_stats(w);
    if (stats[CL_STATS_PARKED_MAPPINGS_CLDMABUF])
        w.fail(std::to_string(stats[CL_STATS_PARKED_MAPPINGS_CLDMABUF]) +
               " mappings still parked 2 s after the dma-buf's last fd closed");
    // Their teardown posts the ICD objects' release (a parked registration,
    // the staging it kept) to the worker, whose jobs wait for a scheduler.
    drain_worker_jobs(w);
    if (stats[CL_STATS_FENCE_TIMEOUTS_CLDMABUF] || stats[CL_STATS_RELEASE_FENCES_EXPIRED_CLDMABUF])
        w.fail("a wait reached its bound: " + std::to_string(stats[CL_STATS_FENCE_TIMEOUTS_CLDMABUF]) +
               " fence waits gave up, " + std::to_string(stats[CL_STATS_RELEASE_FENCES_EXPIRED_CLDMABUF]) +
               " release fences expired");
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
    // A barrier callback's record goes with its step's events (its callback,
    // or the sweep that saw the barrier end where the ICD never calls it).
    if (const cl_ulong records = layer_stats(w)[CL_STATS_STEP_CALLBACK_RECORDS_CLDMABUF])
        w.fail(std::to_string(records) + " barrier-callback records of the layer's steps are left");
}

}  // namespace explore
