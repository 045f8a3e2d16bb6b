// ICD faults (issue #16, item 3, "fail the ICD's calls the layer makes"): the
// test ICD fails the Nth call of one of its functions (PLATFORM_TESTICD_FAIL,
// testicd.hpp) while the layer imports, acquires and releases a dma-buf.
// Each run must return an error the spec allows for the entry point, or
// succeed with the right bytes; afterwards the ICD's live buffers and events
// and the process's fds and mappings are back where they were (a leaked
// ICD object shows in the test ICD's own counts).  Tag [icd-fault]; runs in
// testicd-faults (zero-copy route) and testicd-faults-discrete (copy route).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>

#include "CL/cl_ext_cldmabuf.h"
#include "dmabuf_source.hpp"
#include "test_dmabufs.hpp"
#include "test_fixture.hpp"

using namespace testicd_test;

namespace {

constexpr cl_platform_info kFail = 0x7E59, kState = 0x7E5A;  // tests/icd/testicd.hpp

struct State {
    cl_ulong calls = 0, fired = 0, live_mems = 0, live_events = 0;
};

void arm(const Env &env, const std::string &spec) {
    REQUIRE(clGetPlatformInfo(env.platform, kFail, spec.size() + 1, const_cast<char *>(spec.c_str()), nullptr) ==
            CL_SUCCESS);
}
State state(const Env &env) {
    cl_ulong v[4] = {};
    REQUIRE(clGetPlatformInfo(env.platform, kState, sizeof v, v, nullptr) == CL_SUCCESS);
    return {v[0], v[1], v[2], v[3]};
}

int count_dir(const char *path) {
    int n = 0;
    if (DIR *d = opendir(path)) {
        while (readdir(d)) ++n;
        closedir(d);
    }
    return n;
}
// Mappings of dma-bufs (the virtual Gen9's are memfds) and of memfds: what a
// leaked import would leave.  Thread stacks of the layer's lingering workers
// are anonymous and not counted.
int count_maps() {
    std::ifstream in("/proc/self/maps");
    int n = 0;
    for (std::string line; std::getline(in, line);)
        if (line.find("memfd:") != std::string::npos || line.find("dmabuf") != std::string::npos) ++n;
    return n;
}

struct Counts {
    cl_ulong mems, events;
    int fds, maps;
    bool operator==(const Counts &) const = default;
};
Counts counts(const Env &env) {
    const State s = state(env);
    return {s.live_mems, s.live_events, count_dir("/proc/self/fd"), count_maps()};
}
// The layer's host steps end on its workers a moment after clFinish: the
// counts once they have not changed for 100 ms (bounded at 5 s).
Counts settled(const Env &env) {
    Counts last = counts(env);
    for (int still = 0, i = 0; still < 5 && i < 250; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const Counts now = counts(env);
        still = now == last ? still + 1 : 0;
        last = now;
    }
    return last;
}

const std::set<cl_int> kAllowed = {CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY, CL_MEM_OBJECT_ALLOCATION_FAILURE,
                                   CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST};

struct Run {
    const Env &env;
    clEnqueueAcquireExternalMemObjectsKHR_fn acquire;
    clEnqueueReleaseExternalMemObjectsKHR_fn release;
    e2e::Dmabuf buf;
    cl_mem mem = nullptr;
    bool given = false;

    explicit Run(const Env &e) : env(e) {
        acquire = reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
            env.function("clEnqueueAcquireExternalMemObjectsKHR"));
        release = reinterpret_cast<clEnqueueReleaseExternalMemObjectsKHR_fn>(
            env.function("clEnqueueReleaseExternalMemObjectsKHR"));
        buf = e2e::make_dmabuf(4096);
        auto *words = static_cast<uint32_t *>(cldmabuf::test::map(buf));
        for (uint32_t i = 0; i < 1024; ++i) words[i] = 0x700 + i;
        cldmabuf::test::unmap(words, 4096);
    }
    ~Run() {
        if (mem) clReleaseMemObject(mem);
        clFinish(env.queue);
        if (given) {
            const int fd = buf.release_fd();
            // Closed by the layer at destroy, unless fstat could not name it.
            for (int i = 0; i < 100 && fcntl(fd, F_GETFD) != -1; ++i) usleep(10000);
        }
    }
    cl_int import() {
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                           static_cast<cl_mem_properties>(buf.fd), 0};
        cl_int err = CL_SUCCESS;
        mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, 4096, nullptr, &err);
        given = mem != nullptr;
        return mem ? CL_SUCCESS : err;
    }
    cl_int step(bool acq) {
        cl_event ev = nullptr;
        const cl_int enq = (acq ? acquire : release)(env.queue, 1, &mem, 0, nullptr, &ev);
        const cl_int fin = clFinish(env.queue);
        cl_int status = CL_COMPLETE;
        if (ev) {
            clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
            clReleaseEvent(ev);
        }
        return enq != CL_SUCCESS ? enq : status < 0 ? status : fin;
    }
    // The device sees the producer's words (after an acquire on the copy route).
    cl_int read_check() {
        uint32_t got[4] = {};
        const cl_int err = clEnqueueReadBuffer(env.queue, mem, CL_TRUE, 0, sizeof got, got, 0, nullptr, nullptr);
        if (err != CL_SUCCESS) return err;
        for (uint32_t i = 0; i < 4; ++i)
            if (got[i] != 0x700 + i) return 1;
        return CL_SUCCESS;
    }
};

struct Path {
    const char *name;
    std::function<void(Run &)> setup;
    std::function<cl_int(Run &)> op;
};

}  // namespace

TEST_CASE("every ICD call the layer makes on import, acquire and release may fail", "[icd-fault]") {
    REQUIRE_DMABUF();
    Env env;
    const char *functions[] = {"clCreateBufferWithProperties", "clCreateBuffer", "clSetMemObjectDestructorCallback",
                               "clCreateUserEvent", "clEnqueueMarkerWithWaitList", "clEnqueueBarrierWithWaitList",
                               "clSetEventCallback", "clFlush", "clEnqueueReadBuffer", "clEnqueueWriteBuffer",
                               "clEnqueueFillBuffer"};
    const Path paths[] = {
        {"import", [](Run &) {},
         [](Run &r) {
             cl_int err = r.import();
             if (err != CL_SUCCESS) return err;
             err = r.step(true);
             if (err == CL_SUCCESS) err = r.read_check();
             r.step(false);
             return err;
         }},
        {"acquire", [](Run &r) { REQUIRE(r.import() == CL_SUCCESS); },
         [](Run &r) {
             cl_int err = r.step(true);
             if (err == CL_SUCCESS) err = r.read_check();
             return err;
         }},
        {"release", [](Run &r) {
             REQUIRE(r.import() == CL_SUCCESS);
             REQUIRE(r.step(true) == CL_SUCCESS);
         },
         [](Run &r) { return r.step(false); }},
    };
    int total = 0, failed_runs = 0;
    for (const Path &p : paths) {
        INFO("path " << p.name);
        for (int warm = 0; warm < 2; ++warm) {
            Run r(env);
            p.setup(r);
            REQUIRE(p.op(r) == CL_SUCCESS);
        }
        const Counts before = settled(env);
        int runs = 0, errors = 0;
        for (const char *fn : functions) {
            for (int nth = 1; nth <= 16; ++nth) {
                INFO(fn << " call " << nth << " fails");
                cl_int r_err = CL_SUCCESS;
                State s;
                {
                    Run r(env);
                    p.setup(r);
                    arm(env, std::string(fn) + ":" + std::to_string(nth));
                    r_err = p.op(r);
                    s = state(env);
                    arm(env, "");
                }
                if (s.fired == 0) break;  // the path makes fewer calls of fn
                if (std::getenv("CLDMABUF_ICD_FAULT_DETAIL")) {
                    const Counts now = settled(env);
                    std::printf("[icd-fault-detail] %s %s:%d -> %d: mems %llu events %llu fds %d\n", p.name, fn, nth,
                                r_err, (unsigned long long)now.mems, (unsigned long long)now.events, now.fds);
                }
                ++runs;
                if (r_err != CL_SUCCESS) {
                    ++errors;
                    CHECK(kAllowed.count(r_err) == 1);
                }
            }
        }
        const Counts after = settled(env);
        INFO("before: mems " << before.mems << " events " << before.events << " fds " << before.fds << " maps "
                             << before.maps);
        INFO("after:  mems " << after.mems << " events " << after.events << " fds " << after.fds << " maps "
                             << after.maps);
        CHECK(after == before);
        std::printf("[icd-fault] %-8s runs %3d: completed %3d, spec error %3d; leaks: %s\n", p.name, runs,
                    runs - errors, errors, after == before ? "none" : "FOUND");
        total += runs;
        failed_runs += errors;
    }
    std::printf("[icd-fault] total: %d runs, %d spec errors\n", total, failed_runs);
    CHECK(total > 0);
}

// A queued release whose write-back (the Read of a copy-route import without
// staging) the ICD refuses: the command fails with the ICD's error and the
// marker its fast attempt enqueued goes too.  The queue is held busy by a
// command behind a user event, so the marker does not complete at once and
// the release is queued.  Tag [icd-fault-unstaged]: testicd-faults-unstaged
// (discrete, CLDMABUF_STAGING=off).
TEST_CASE("a queued release whose write-back the ICD refuses leaves no ICD event behind", "[icd-fault-unstaged]") {
    REQUIRE_DMABUF();
    Env env;
    auto busy_release = [&env](bool fail) {
        Run r(env);
        REQUIRE(r.import() == CL_SUCCESS);
        REQUIRE(r.step(true) == CL_SUCCESS);
        cl_int err = CL_SUCCESS;
        cl_event gate = clCreateUserEvent(env.context, &err);
        REQUIRE(gate);
        cl_event held = nullptr;
        REQUIRE(clEnqueueMarkerWithWaitList(env.queue, 1, &gate, &held) == CL_SUCCESS);
        if (fail) arm(env, "clEnqueueReadBuffer:1");
        cl_event ev = nullptr;
        const cl_int released = r.release(env.queue, 1, &r.mem, 0, nullptr, &ev);
        const State s = state(env);
        arm(env, "");
        clSetUserEventStatus(gate, CL_COMPLETE);
        clFinish(env.queue);
        clReleaseEvent(held);
        clReleaseEvent(gate);
        if (ev) clReleaseEvent(ev);
        if (fail) {
            CHECK(s.fired == 1);  // the write-back was asked for
            CHECK(released == CL_OUT_OF_RESOURCES);
        } else {
            CHECK(released == CL_SUCCESS);
        }
    };
    busy_release(false);  // warm: what the first import and release keep for the next
    const Counts before = settled(env);
    busy_release(true);
    const Counts after = settled(env);
    INFO("events before " << before.events << ", after " << after.events);
    CHECK(after == before);
}
