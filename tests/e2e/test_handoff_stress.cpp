// The handoff under concurrency (issue #28): threads sharing one queue and
// the imports on it (each import used by one thread at a time, as an
// application orders its own use), a thread that calls clFinish on that
// queue all along, and a fence-honouring producer behind a user event on a
// queue of its own.  Everything is checked through the dma-bufs themselves,
// as the other side of a dma-buf sees them:
//   - an implicit-sync consumer (poll(POLLIN) on the dma-buf, then a read
//     through its own mapping) right after each release returned must see
//     that round's bytes: the release covered every command before it;
//   - the producer waits for the dma-buf's fences before it writes (as Mesa
//     does) and must never wait for the release behind the acquire it holds.
// Runs in e2e-sim (host), in the TSan build, and in the VM lane on PoCL 6 and
// rusticl with vgem fences.  CLDMABUF_STRESS_ROUNDS sets the rounds (30).
#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "cl_fixture.hpp"
#include "dmabuf_view.hpp"
#include "imported_buffer.hpp"
#include "layer_probe.hpp"
#include "test_dmabufs.hpp"

using namespace e2e;

namespace {

int rounds() {
    const char *v = std::getenv("CLDMABUF_STRESS_ROUNDS");
    return v && std::atoi(v) > 0 ? std::atoi(v) : 30;
}
// One import, its own consumer fd and CPU view, and the mutex the
// application orders its use with.
struct Shared {
    ImportedBuffer imported;
    DmabufView view;
    int watch;
    std::mutex in_use;
    Shared(const ClEnv &env, size_t size)
        : imported(env, size), view(imported.buf), watch(fcntl(imported.buf.fd, F_DUPFD_CLOEXEC, 0)) {}
    ~Shared() { close(watch); }
};

}  // namespace

TEST_CASE("stress: threads sharing a queue and imports, clFinish racing them, a fence-honouring producer; "
          "checked through the dma-bufs",
          "[stress][kernel]") {
    REQUIRE_DMABUF();
    ClEnv env;
    if (!layer_has_fence_source(env)) SKIP("no fence source for the layer (neither sw_sync nor vgem)");
    constexpr size_t size = 65536;
    constexpr int workers = 3;
    const int n = rounds();
    layer_imports_in_place();  // what the layer opens once per process is not this test's
    const int fds_before = settled_fds();
    std::array<Shared *, 2> shared{new Shared(env, size), new Shared(env, size)};
    if (!layer_import(shared[0]->imported.mem)) {
        for (Shared *s : shared) delete s;
        SKIP("the ICD imports this dma-buf itself");
    }
    std::atomic<int> enqueue_failures{0}, stale_reads{0}, producer_stalls{0}, producer_bytes{0};
    std::atomic<int> workers_left{workers};

    std::vector<std::thread> pool;
    for (int t = 0; t < workers; ++t)
        pool.emplace_back([&, t] {
            for (int r = 0; r < n; ++r) {
                Shared &s = *shared[(t + r) % 2];
                std::lock_guard mine(s.in_use);
                const cl_uint pattern = 0x51000000u | (t << 16) | r;
                if (env.acquire(env.queue, 1, &s.imported.mem, 0, nullptr, nullptr) != CL_SUCCESS ||
                    clEnqueueFillBuffer(env.queue, s.imported.mem, &pattern, sizeof pattern, 0, size, 0, nullptr,
                                        nullptr) != CL_SUCCESS ||
                    env.release(env.queue, 1, &s.imported.mem, 0, nullptr, nullptr) != CL_SUCCESS) {
                    enqueue_failures++;
                    continue;
                }
                // The consumer: waits for the dma-buf's writers, then reads.
                pollfd p{s.watch, POLLIN, 0};
                poll(&p, 1, 4 * fence_timeout_ms());
                s.view.begin(false);
                const bool fresh = s.view.words[0] == pattern && s.view.words[size / 4 - 1] == pattern;
                s.view.end(false);
                if (!fresh && stale_reads++ == 0)
                    std::fprintf(stderr, "stress: round %d of thread %d read %08x, wanted %08x (poll %d)\n", r, t,
                                 s.view.words[0], pattern, p.revents);
            }
            clFinish(env.queue);
            workers_left--;
        });
    // clFinish on the shared queue all along (issue #28 item 1's window).
    pool.emplace_back([&] {
        while (workers_left.load() > 0) {
            clFinish(env.queue);
            std::this_thread::yield();
        }
    });
    // The producer, on its own queue: the acquire waits for its user event.
    pool.emplace_back([&] {
        ImportedBuffer y(env, size);
        DmabufView view(y.buf);
        const int watch = fcntl(y.buf.fd, F_DUPFD_CLOEXEC, 0);
        cl_command_queue q = env.make_queue();
        for (int r = 0; r < n / 3 + 1; ++r) {
            cl_int err = CL_SUCCESS;
            cl_event go = clCreateUserEvent(env.context, &err);
            cl_event rel = nullptr;
            const cl_uint pattern = 0x9d000000u | r;
            if (!go || env.acquire(q, 1, &y.mem, 1, &go, nullptr) != CL_SUCCESS ||
                clEnqueueFillBuffer(q, y.mem, &pattern, sizeof pattern, 0, size / 2, 0, nullptr, nullptr) !=
                    CL_SUCCESS ||
                env.release(q, 1, &y.mem, 0, nullptr, &rel) != CL_SUCCESS) {
                enqueue_failures++;
                if (go) {
                    clSetUserEventStatus(go, CL_COMPLETE);
                    clReleaseEvent(go);
                }
                continue;
            }
            const auto t0 = std::chrono::steady_clock::now();
            pollfd p{watch, POLLOUT, 0};
            poll(&p, 1, 2 * fence_timeout_ms());
            if (std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(fence_timeout_ms() / 2))
                producer_stalls++;
            view.begin(true);
            for (size_t i = size / 8; i < size / 4; ++i) view.words[i] = pattern + 1;
            view.end(true);
            clSetUserEventStatus(go, CL_COMPLETE);
            clWaitForEvents(1, &rel);
            view.begin(false);
            if (view.words[0] != pattern || view.words[size / 4 - 1] != pattern + 1) producer_bytes++;
            view.end(false);
            clReleaseEvent(rel);
            clReleaseEvent(go);
        }
        clFinish(q);
        clReleaseCommandQueue(q);
        close(watch);
    });
    for (auto &th : pool) th.join();
    CHECK(enqueue_failures == 0);
    CHECK(stale_reads == 0);
    CHECK(producer_stalls == 0);
    CHECK(producer_bytes == 0);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    for (Shared *s : shared) delete s;
    CHECK(open_fds_toward(fds_before) == fds_before);
}

// Two imports of one dma-buf are one memory (issue #32's alias fixes under
// concurrency).  Each round, every thread makes its own import of the same
// dma-buf and, on the one shared queue, enqueues its acquire behind a user
// event; once all acquires are in the queue (a barrier), each enqueues a
// fill of its own part and its release; then the events complete.  So each
// release is enqueued while the other imports' acquires ahead of it have not
// opened (the release fence's hand-over across imports: attached earlier,
// one import's fence held the next import's SYNC START, behind which its
// release sits: a cycle only the fence timeout broke), and each copy-route
// release is decided before its acquire ran (it must merge: another import
// is held all along).  After each round every thread finds its own part,
// and only it, holding its bytes; no acquire fails and no wait of the layer
// reaches the fence timeout (the counters, not a clock).
TEST_CASE("stress: threads importing one dma-buf each round, writing their own parts behind held acquires; "
          "checked through the dma-buf",
          "[stress][alias][kernel]") {
    REQUIRE_DMABUF();
    ClEnv env;
    constexpr size_t part = 16384;
    constexpr int workers = 3;
    const int n = rounds();
    ImportedBuffer held(env, part * workers);  // the alias held all along
    if (!layer_import(held.mem)) SKIP("the ICD imports this dma-buf itself");
    DmabufView view(held.buf);
    const cl_ulong hits_before = bound_hits(env);
    const auto pattern = [](int t, int r) { return 0xa1000000u | (t << 16) | r; };
    std::atomic<int> failures{0}, wrong_parts{0};
    std::barrier sync(workers);
    std::mutex view_use;
    std::vector<std::thread> pool;
    for (int t = 0; t < workers; ++t)
        pool.emplace_back([&, t] {
            for (int r = 0; r < n; ++r) {
                const int fd = fcntl(view.fd, F_DUPFD_CLOEXEC, 0);
                const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                                   static_cast<cl_mem_properties>(fd), 0};
                cl_int err = CL_SUCCESS;
                cl_mem mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, part * workers,
                                                          nullptr, &err);
                if (!mem && fd >= 0) close(fd);
                cl_event go = mem ? clCreateUserEvent(env.context, &err) : nullptr;
                cl_event rel = nullptr;
                bool ok = go && env.acquire(env.queue, 1, &mem, 1, &go, nullptr) == CL_SUCCESS;
                sync.arrive_and_wait();  // every acquire of the round is in the queue
                const cl_uint value = pattern(t, r);
                ok = ok &&
                     clEnqueueFillBuffer(env.queue, mem, &value, sizeof value, t * part, part, 0, nullptr,
                                         nullptr) == CL_SUCCESS &&
                     env.release(env.queue, 1, &mem, 0, nullptr, &rel) == CL_SUCCESS;
                sync.arrive_and_wait();  // every release of the round is in the queue
                if (go) clSetUserEventStatus(go, CL_COMPLETE);
                ok = ok && clWaitForEvents(1, &rel) == CL_SUCCESS;
                if (!ok) failures++;
                sync.arrive_and_wait();  // every release of the round ran
                {
                    std::lock_guard one(view_use);
                    view.begin(false);
                    for (size_t i = t * part / 4; i < (t + 1) * part / 4; ++i)
                        if (view.words[i] != value) {
                            wrong_parts++;
                            break;
                        }
                    view.end(false);
                }
                for (cl_event e : {go, rel})
                    if (e) clReleaseEvent(e);
                if (mem) clReleaseMemObject(mem);
            }
        });
    for (auto &th : pool) th.join();
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    CHECK(failures == 0);
    CHECK(wrong_parts == 0);
    CHECK(bound_hits(env) == hits_before);
}
