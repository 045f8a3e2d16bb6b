// Acquire/release on explicit fences (issue #20 item 2, docs/semaphores.md
// "Bridges to dma-bufs"): acquire waits for a dma-buf's fences as one
// exported sync_file (DMA_BUF_IOCTL_EXPORT_SYNC_FILE) and falls back to poll
// where the kernel refuses; a queued release puts a layer fence into each
// written dma-buf (IMPORT_SYNC_FILE), which implicit-sync consumers see
// pending until the release step ran, and which is signalled on every path
// (success, a failed step, the fence timeout), with no fd left behind.
//
// On the host: e2e-sim (the virtual Gen9 models both ioctls, its blitter's
// fences and sw_sync).  In the VM lane's e2e runs (untagged filter): PoCL 6
// and rusticl on real dma-heap/udmabuf/vgem dma-bufs, vgem fences, Linux
// 6.12.  Tag [explicit-fences]; the fault cases need the virtual Gen9.
#include <catch2/catch_test_macros.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "cl_fixture.hpp"
#include "dmabuf_view.hpp"
#include "event_info.hpp"
#include "imported_buffer.hpp"
#include "layer_probe.hpp"
#include "needs_dmabuf.hpp"
#include "layer/sync/semaphore_compat.h"
#include "test_dmabufs.hpp"
#include "test_env.hpp"
#include "tests/sim/vgen9_sw_sync_uapi.h"
#include "vgen9_control.hpp"

using namespace e2e;
using cldmabuf::test::env_is;
using cldmabuf::test::vgen9;
namespace tsup = cldmabuf::test;

namespace {

// A consumer's own view of the dma-buf (taken before the import hands the
// fd over): poll() on it is what implicit-sync users see.
int consumer_fd(const Dmabuf &buf) {
    const int fd = fcntl(buf.fd, F_DUPFD_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    return fd;
}
// A writer is pending on the dma-buf: POLLIN (readers wait for the writer) not ready now.
bool writer_pending(int fd) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, 0) == 0;
}
bool writer_done_within(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

bool kernel_imports_sync_files(const Dmabuf &buf) {
    dma_buf_export_sync_file e{};
    e.flags = DMA_BUF_SYNC_READ;
    if (ioctl(buf.fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e) != 0) return false;  // Linux < 6.0
    close(e.fd);
    return true;
}

#define REQUIRE_RELEASE_FENCES(env, imported)                                                          \
    do {                                                                                               \
        if (env_is("CLDMABUF_EXPLICIT_FENCES", "off")) SKIP("CLDMABUF_EXPLICIT_FENCES=off");             \
        if (!layer_has_fence_source(env)) SKIP("no fence source for the layer (neither sw_sync nor vgem)"); \
        if (!kernel_imports_sync_files((imported).buf)) SKIP("no DMA_BUF_IOCTL_EXPORT/IMPORT_SYNC_FILE"); \
        if (!layer_import((imported).mem)) SKIP("the ICD imports this dma-buf itself");                  \
    } while (0)

// sync_file fds open now: the virtual Gen9's count (its sync_files are its
// own), else this process's anon_inode:sync_file fds.
size_t sync_files_open();

// The count once it has not changed for 20 ms (at most 2 s).
size_t settled_sync_files() {
    size_t last = sync_files_open();
    for (int same = 0, i = 0; same < 4 && i < 400; ++i) {
        usleep(5000);
        const size_t now = sync_files_open();
        same = now == last ? same + 1 : 0;
        last = now;
    }
    return last;
}

size_t sync_files_open() {
    if (vgen9().loaded) return vgen9().now().live_sync_fds;
    size_t n = 0;
    if (DIR *d = opendir("/proc/self/fd")) {
        while (dirent *e = readdir(d)) {
            char link[64] = {};
            const std::string path = std::string("/proc/self/fd/") + e->d_name;
            const ssize_t len = readlink(path.c_str(), link, sizeof link - 1);
            if (len > 0 && std::strcmp(link, "anon_inode:sync_file") == 0) ++n;
        }
        closedir(d);
    }
    return n;
}

// A release of `mem` held behind an open user event: the queued path.
struct HeldRelease {
    const ClEnv &env;
    cl_event gate = nullptr;
    cl_event rel = nullptr;
    HeldRelease(const ClEnv &e, cl_mem mem) : env(e) {
        cl_int err = CL_SUCCESS;
        gate = clCreateUserEvent(env.context, &err);
        REQUIRE(err == CL_SUCCESS);
        REQUIRE(env.release(env.queue, 1, &mem, 1, &gate, &rel) == CL_SUCCESS);
    }
    void open() { REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS); }
    ~HeldRelease() {
        clReleaseEvent(rel);
        clReleaseEvent(gate);
    }
};

void acquire_now(const ClEnv &env, cl_mem mem) {
    REQUIRE(env.acquire(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);  // no earlier step of the import left unfinished
}

// A consumer's fd on a dma-buf (consumer_fd), closed with its owner.
struct ConsumerFd {
    int fd;
    explicit ConsumerFd(const Dmabuf &buf) : fd(consumer_fd(buf)) {}
    ConsumerFd(const ConsumerFd &) = delete;
    ConsumerFd &operator=(const ConsumerFd &) = delete;
    ~ConsumerFd() { close(fd); }
    operator int() const { return fd; }
};

const Dmabuf &with_release_fences(const ClEnv &env, const ImportedBuffer &b) {
    REQUIRE_RELEASE_FENCES(env, b);
    return b.buf;
}

// A case's import, skipped unless its releases attach fences here, and a
// consumer's fd watching its dma-buf.
struct FencedImport : NeedsDmabuf {
    ClEnv env;
    ImportedBuffer b{env, 65536};
    ConsumerFd watch{with_release_fences(env, b)};
    // Acquires the import; the process's fds once settled after it.
    int acquire_settled() {
        acquire_now(env, b.mem);
        return settled_fds();
    }
};

// A write fence on `target` that completes only when told: on the virtual
// Gen9 a blitter copy into it on a queue of its own (manual mode: its batch
// completes at tick), elsewhere a vgem fence.
struct PendingWriter {
    const ClEnv &env;
    ImportedBuffer &target;
    cl_command_queue other = nullptr;
    cl_event copy = nullptr;
    uint32_t vgem_fence = 0;
    bool done = false;
    PendingWriter(const ClEnv &e, ImportedBuffer &src, ImportedBuffer &dst) : env(e), target(dst) {
        if (vgen9().loaded) {
            other = env.make_queue();
            const uint64_t before = vgen9().submitted();
            vgen9().set_manual(1);
            REQUIRE(clEnqueueCopyBuffer(other, src.mem, dst.mem, 0, 0, 4096, 0, nullptr, &copy) == CL_SUCCESS);
            REQUIRE(clFlush(other) == CL_SUCCESS);
            REQUIRE(vgen9().wait_for_submission(before, 10000));
        } else {
            vgem_fence = tsup::attach_fence(dst.buf, /*write=*/true);
        }
    }
    void complete() {
        if (done) return;
        done = true;
        if (vgen9().loaded) {
            vgen9().set_manual(0);
            vgen9().tick(64);
            clWaitForEvents(1, &copy);
        } else {
            tsup::signal_fence(target.buf, vgem_fence);
        }
    }
    ~PendingWriter() {
        complete();
        if (copy) clReleaseEvent(copy);
        if (other) {
            clFinish(other);
            clReleaseCommandQueue(other);
        }
    }
};

bool can_make_pending_writer() {
    if (vgen9().loaded) return layer_takes_blitter() && !env_is("CLDMABUF_IMPORT", "copy");
    return source_has_fences();  // vgem in the VM
}

}  // namespace

TEST_CASE("explicit fences: a queued release's fence is pending for consumers until the release ran",
          "[explicit-fences]") {
    FencedImport fi;
    auto &[env, b, watch] = fi;
    const int fds_before = fi.acquire_settled();
    {
        HeldRelease r(env, b.mem);
        CHECK(writer_pending(watch));  // an implicit-sync reader waits for the release
        CHECK(status_of(r.rel) != CL_COMPLETE);
        r.open();
        CHECK(clWaitForEvents(1, &r.rel) == CL_SUCCESS);
        // Signalled by the step's work, which ends before its event completes
        // (the watchdog would take CLDMABUF_FENCE_TIMEOUT_MS).
        CHECK_FALSE(writer_pending(watch));
    }
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    CHECK(open_fds_toward(fds_before) == fds_before);  // the fence's timeline is closed

    // The next round: acquire (waits on nothing left by the layer) and release again.
    acquire_now(env, b.mem);
    {
        HeldRelease r(env, b.mem);
        CHECK(writer_pending(watch));
        r.open();
        CHECK(clFinish(env.queue) == CL_SUCCESS);
        CHECK_FALSE(writer_pending(watch));
    }
    CHECK(open_fds_toward(fds_before) == fds_before);
}

TEST_CASE("explicit fences: a release that cannot run yet is signalled at the fence timeout, not held forever",
          "[explicit-fences]") {
    FencedImport fi;
    auto &[env, b, watch] = fi;
    const int fds_before = fi.acquire_settled();
    {
        HeldRelease r(env, b.mem);
        CHECK(writer_pending(watch));
        // Nobody opens the gate: the consumer is let go by the layer's bound.
        const cl_ulong expired = layer_stats(env.platform)[CL_STATS_RELEASE_FENCES_EXPIRED_CLDMABUF];
        CHECK(writer_done_within(watch, fence_timeout_ms() * 10 + 5000));
        CHECK(layer_stats(env.platform)[CL_STATS_RELEASE_FENCES_EXPIRED_CLDMABUF] == expired + 1);
        CHECK(status_of(r.rel) != CL_COMPLETE);  // the release itself still waits for its gate
        r.open();
        CHECK(clWaitForEvents(1, &r.rel) == CL_SUCCESS);
    }
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    CHECK(open_fds_toward(fds_before) == fds_before);
}

TEST_CASE("explicit fences: read-only imports and the fast path attach nothing", "[explicit-fences]") {
    REQUIRE_DMABUF();
    ClEnv env;
    ImportedBuffer probe(env, 4096);
    REQUIRE_RELEASE_FENCES(env, probe);
    Dmabuf buf = make_dmabuf(65536);
    const int watch = consumer_fd(buf);
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(buf.fd),
                                       0};
    cl_int err = CL_SUCCESS;
    cl_mem ro = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_ONLY, buf.size, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    buf.release_fd();  // the import owns it
    acquire_now(env, ro);
    {
        HeldRelease r(env, ro);
        CHECK_FALSE(writer_pending(watch));  // the device wrote nothing: no fence for readers
        r.open();
        CHECK(clFinish(env.queue) == CL_SUCCESS);
    }
    // The fast path (idle queue, no wait list) is done at once: nothing to attach.
    acquire_now(env, probe.mem);
    const int watch2 = consumer_fd(probe.buf);
    const LayerStats before = layer_stats(env.platform);
    REQUIRE(env.release(env.queue, 1, &probe.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    // (Taken only when the ICD reports the queue idle at once; the copy route always queues.)
    if (layer_stats(env.platform)[CL_STATS_FAST_HANDOFFS_CLDMABUF] > before[CL_STATS_FAST_HANDOFFS_CLDMABUF])
        CHECK_FALSE(writer_pending(watch2));
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    clReleaseMemObject(ro);
    close(watch);
    close(watch2);
}

TEST_CASE("explicit fences: acquire waits for a pending writer through the exported sync_file",
          "[explicit-fences]") {
    REQUIRE_DMABUF();
    if (env_is("CLDMABUF_EXPLICIT_FENCES", "off")) SKIP("CLDMABUF_EXPLICIT_FENCES=off");
    if (!can_make_pending_writer()) SKIP("needs the virtual Gen9 blitter or vgem fences for a pending writer");
    ClEnv env;
    ImportedBuffer a(env, 65536), b(env, 65536);
    if (!kernel_imports_sync_files(b.buf)) SKIP("no DMA_BUF_IOCTL_EXPORT_SYNC_FILE (Linux < 6.0)");
    if (!layer_import(b.mem)) SKIP("the ICD imports this dma-buf itself");
    const int watch = consumer_fd(b.buf);
    const int fds_before = settled_fds();
    const size_t sync_before = sync_files_open();
    cl_event acq = nullptr;
    {
        PendingWriter writer(env, a, b);
        const size_t with_writer = sync_files_open();  // the blitter's fence-out, held by its step
        REQUIRE(env.acquire(env.queue, 1, &b.mem, 0, nullptr, &acq) == CL_SUCCESS);
        // The acquire's step holds the dma-buf's fences as one sync_file while it waits.
        CHECK(eventually([&] { return sync_files_open() == with_writer + 1; }, fence_timeout_ms() / 2));
        CHECK(status_of(acq) != CL_COMPLETE);
        writer.complete();
        CHECK(clWaitForEvents(1, &acq) == CL_SUCCESS);
        CHECK(status_of(acq) == CL_COMPLETE);
    }
    REQUIRE(env.release(env.queue, 1, &b.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    clReleaseEvent(acq);
    CHECK(writer_done_within(watch, 5000));
    CHECK(eventually([&] { return sync_files_open() == sync_before; }));
    CHECK(open_fds_toward(fds_before) == fds_before);
    close(watch);
}

// ---- refusals and failures, modelled by the virtual Gen9 ------------------------------------------

TEST_CASE("explicit fences: EXPORT_SYNC_FILE refused (ENOTTY) falls back to poll, which still waits",
          "[explicit-fences]") {
    REQUIRE_DMABUF();
    if (!vgen9().loaded || !can_make_pending_writer()) SKIP("needs the virtual Gen9 blitter");
    ClEnv env;
    ImportedBuffer a(env, 65536), b(env, 65536);
    const int fds_before = settled_fds();
    const size_t sync_before = sync_files_open();
    REQUIRE(vgen9().fail_ioctl(DMA_BUF_IOCTL_EXPORT_SYNC_FILE, 0, ENOTTY) == 0);  // a Linux < 6.0 kernel
    cl_event acq = nullptr;
    {
        PendingWriter writer(env, a, b);
        // The writer's sync_files as they settle: the layer's worker keeps a
        // dup of the copy's batch fence for the semaphore chain, taken just
        // after the submission the writer waited for.
        const size_t with_writer = settled_sync_files();
        REQUIRE(env.acquire(env.queue, 1, &b.mem, 0, nullptr, &acq) == CL_SUCCESS);
        CHECK_FALSE(eventually([&] { return status_of(acq) == CL_COMPLETE; }, fence_timeout_ms() / 5));
        CHECK(sync_files_open() == with_writer);  // polled: no sync_file of the acquire's
        writer.complete();
        CHECK(clWaitForEvents(1, &acq) == CL_SUCCESS);  // not a failure: the poll waited instead
    }
    REQUIRE(env.release(env.queue, 1, &b.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    clReleaseEvent(acq);
    vgen9().reset();
    CHECK(eventually([&] { return sync_files_open() == sync_before; }));
    CHECK(open_fds_toward(fds_before) == fds_before);
}

TEST_CASE("explicit fences: IMPORT_SYNC_FILE refused: the release behaves as before", "[explicit-fences]") {
    REQUIRE_DMABUF();
    if (!vgen9().loaded) SKIP("needs the virtual Gen9 to refuse the ioctl");
    FencedImport fi;
    auto &[env, b, watch] = fi;
    const int fds_before = fi.acquire_settled();
    REQUIRE(vgen9().fail_ioctl(DMA_BUF_IOCTL_IMPORT_SYNC_FILE, 0, EINVAL) == 0);
    for (int round = 0; round < 2; ++round) {  // the second is not asked again
        HeldRelease r(env, b.mem);
        CHECK_FALSE(writer_pending(watch));
        r.open();
        CHECK(clFinish(env.queue) == CL_SUCCESS);
        acquire_now(env, b.mem);
    }
    vgen9().reset();
    CHECK(open_fds_toward(fds_before) == fds_before);  // the unimported fence's timeline is closed
    REQUIRE(env.release(env.queue, 1, &b.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
}

TEST_CASE("explicit fences: a failed release step still signals its fence", "[explicit-fences]") {
    REQUIRE_DMABUF();
    if (!vgen9().loaded) SKIP("needs the virtual Gen9 to fail DMA_BUF_IOCTL_SYNC");
    FencedImport fi;
    auto &[env, b, watch] = fi;
    const int fds_before = fi.acquire_settled();
    {
        HeldRelease r(env, b.mem);
        CHECK(writer_pending(watch));
        REQUIRE(vgen9().fail_ioctl(DMA_BUF_IOCTL_SYNC, 1, EIO) == 0);  // the release's SYNC END
        r.open();
        clWaitForEvents(1, &r.rel);
        CHECK(status_of(r.rel) < 0);
        CHECK_FALSE(writer_pending(watch));  // a consumer is not held by a failed release
    }
    CHECK(clFinish(env.queue) == CL_OUT_OF_RESOURCES);  // the failure, reported once
    vgen9().reset();
    CHECK(open_fds_toward(fds_before) == fds_before);
}

// ---- the pipelined acquire + device work + release ----------------------------------------------

namespace {

// The consumer's other look: the dma-buf's fences for a reader as one
// exported sync_file (what Vulkan or a compositor takes), pending now?
bool exported_writer_pending(int fd) {
    dma_buf_export_sync_file e{};
    e.flags = DMA_BUF_SYNC_READ;
    REQUIRE(ioctl(fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e) == 0);
    pollfd p{e.fd, POLLIN, 0};
    const bool pending = poll(&p, 1, 0) == 0;
    close(e.fd);
    return pending;
}

}  // namespace

TEST_CASE("explicit fences: acquire, fill and release enqueued together while the acquire waits: the release's "
          "fence is in the dma-buf once the acquire ran, not before, and the acquire does not wait for it",
          "[explicit-fences][kernel]") {
    FencedImport fi;
    auto &[env, b, watch] = fi;
    DmabufView view(b.buf);
    view.begin(true);
    view.fill_words(0x1000);  // what a producer left
    view.end(true);
    const int fds_before = settled_fds();
    const cl_uint pattern = 0x5a17c0deu;
    cl_event go = env.make_user_event();      // the acquire's wait list: held back
    cl_event let_go = env.make_user_event();  // the release's: held until the test has looked
    cl_event acq = nullptr, fill = nullptr, rel = nullptr;
    REQUIRE(env.acquire(env.queue, 1, &b.mem, 1, &go, &acq) == CL_SUCCESS);
    REQUIRE(clEnqueueFillBuffer(env.queue, b.mem, &pattern, sizeof pattern, 0, b.size, 0, nullptr, &fill) ==
            CL_SUCCESS);
    REQUIRE(env.release(env.queue, 1, &b.mem, 1, &let_go, &rel) == CL_SUCCESS);
    // Until the acquire ran the external side owns the buffer: no fence of
    // the layer's is there (issue #28 item 2: a producer that honours
    // implicit sync would wait for it, and the acquire waits for the producer).
    CHECK_FALSE(writer_pending(watch));
    CHECK_FALSE(exported_writer_pending(watch));
    CHECK(status_of(acq) != CL_COMPLETE);

    const cl_ulong hits = bound_hits(env);
    REQUIRE(clSetUserEventStatus(go, CL_COMPLETE) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &acq) == CL_SUCCESS);
    // Had its SYNC START waited for the release's fence, only the watchdog
    // (at the fence timeout) would have let it go, and the fence with it.
    CHECK(bound_hits(env) == hits);
    // From the acquire's run on, implicit-sync consumers wait for the
    // release, both ways of looking (the pipelined fence).
    CHECK(writer_pending(watch));
    CHECK(exported_writer_pending(watch));
    CHECK(clWaitForEvents(1, &fill) == CL_SUCCESS);
    CHECK(writer_pending(watch));  // the device wrote; the release has not run

    REQUIRE(clSetUserEventStatus(let_go, CL_COMPLETE) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &rel) == CL_SUCCESS);
    CHECK_FALSE(writer_pending(watch));  // signalled by the release's step
    CHECK_FALSE(exported_writer_pending(watch));
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    view.begin(false);
    bool all = true;
    for (size_t i = 0; i < b.size / 4; ++i) all = all && view.words[i] == pattern;
    view.end(false);
    CHECK(all);
    for (cl_event e : {acq, fill, rel, go, let_go}) clReleaseEvent(e);
    CHECK(open_fds_toward(fds_before) == fds_before);
}

// Issue #28 item 2: a producer without fences (V4L2 DQBUF, another process)
// holds the acquire with a user event and, honouring implicit sync as Mesa
// does, waits for the dma-buf's fences before it writes the frame; kernel
// and release were enqueued together.  Before, the release had opened the
// acquire ahead (SYNC START before the producer's writes) and attached its
// fence, which waits for the kernel, which waits for the producer: the
// producer waited the whole fence timeout, every frame.
TEST_CASE("explicit fences: a fence-honouring producer that completes the acquire's user event does not wait for "
          "the release, three frames in a row",
          "[explicit-fences][kernel]") {
    FencedImport fi;
    auto &[env, b, watch] = fi;
    const int fds_before = settled_fds();
    for (cl_uint frame = 0; frame < 3; ++frame) {
        cl_event go = env.make_user_event();
        cl_event acq = nullptr, rel = nullptr;
        REQUIRE(env.acquire(env.queue, 1, &b.mem, 1, &go, &acq) == CL_SUCCESS);
        const cl_uint pattern = 0xf00d0000u + frame;
        REQUIRE(clEnqueueFillBuffer(env.queue, b.mem, &pattern, sizeof pattern, 0, b.size / 2, 0, nullptr,
                                    nullptr) == CL_SUCCESS);
        REQUIRE(env.release(env.queue, 1, &b.mem, 0, nullptr, &rel) == CL_SUCCESS);
        // The producer, on its own thread: wait (bounded) for every fence as a
        // writer, write the frame's second half through its own mapping, then
        // let the acquire go.
        // A release fence in its way would hold it until the watchdog's bound.
        const cl_ulong hits = bound_hits(env);
        std::thread producer([&] {
            pollfd p{watch, POLLOUT, 0};
            poll(&p, 1, 2 * fence_timeout_ms());
            DmabufView view(b.buf);
            view.begin(true);
            for (size_t i = b.size / 8; i < b.size / 4; ++i) view.words[i] = 0xbeef0000u + frame;
            view.end(true);
            clSetUserEventStatus(go, CL_COMPLETE);
        });
        producer.join();
        CHECK(bound_hits(env) == hits);
        CHECK(clWaitForEvents(1, &rel) == CL_SUCCESS);
        CHECK(status_of(acq) == CL_COMPLETE);
        CHECK(writer_done_within(watch, 1000));
        CHECK(clFinish(env.queue) == CL_SUCCESS);
        DmabufView view(b.buf);
        view.begin(false);
        bool ours = true, theirs = true;
        for (size_t i = 0; i < b.size / 8; ++i) ours = ours && view.words[i] == pattern;
        for (size_t i = b.size / 8; i < b.size / 4; ++i) theirs = theirs && view.words[i] == 0xbeef0000u + frame;
        view.end(false);
        CHECK(ours);
        CHECK(theirs);
        for (cl_event e : {acq, rel, go}) clReleaseEvent(e);
    }
    CHECK(open_fds_toward(fds_before) == fds_before);
}

// The pipelined fence at once where the acquire's wait list is complete: the
// acquire waits only for the queue (a blitter copy the virtual Gen9 holds)
// and no fence is pending on the dma-buf.  The release opens the acquire ahead and its
// fence is in the dma-buf from its enqueue on (a compositor handed the
// dma-buf right after the release waits for it).
TEST_CASE("explicit fences: an acquire that waits only for its queue is opened ahead by the release: the fence is "
          "there at once",
          "[explicit-fences]") {
    REQUIRE_DMABUF();
    if (!vgen9().loaded) SKIP("needs the virtual Gen9 blitter to hold the queue without a user event");
    ClEnv env;
    ImportedBuffer a(env, 65536), b(env, 65536), c(env, 65536);
    REQUIRE_RELEASE_FENCES(env, c);
    const int watch = consumer_fd(c.buf);
    const uint64_t before = vgen9().submitted();
    vgen9().set_manual(1);
    cl_event copy = nullptr, acq = nullptr, rel = nullptr;
    REQUIRE(clEnqueueCopyBuffer(env.queue, a.mem, b.mem, 0, 0, 4096, 0, nullptr, &copy) == CL_SUCCESS);
    REQUIRE(clFlush(env.queue) == CL_SUCCESS);
    if (!vgen9().wait_for_submission(before, 2000)) {  // the copy route: the ICD copied, not the blitter
        vgen9().set_manual(0);
        clFinish(env.queue);
        clReleaseEvent(copy);
        close(watch);
        SKIP("the layer did not take the blitter for this copy (not an in-place import)");
    }
    REQUIRE(env.acquire(env.queue, 1, &c.mem, 0, nullptr, &acq) == CL_SUCCESS);
    const cl_uint pattern = 0xa7ead;
    REQUIRE(clEnqueueFillBuffer(env.queue, c.mem, &pattern, sizeof pattern, 0, c.size, 0, nullptr, nullptr) ==
            CL_SUCCESS);
    REQUIRE(env.release(env.queue, 1, &c.mem, 0, nullptr, &rel) == CL_SUCCESS);
    CHECK(status_of(acq) != CL_COMPLETE);  // behind the held copy
    CHECK(writer_pending(watch));          // the release's fence, at once
    vgen9().set_manual(0);
    vgen9().tick(64);
    CHECK(clWaitForEvents(1, &rel) == CL_SUCCESS);
    CHECK(writer_done_within(watch, 1000));
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    for (cl_event e : {copy, acq, rel}) clReleaseEvent(e);
    close(watch);
}

TEST_CASE("explicit fences: two pipelined rounds on one import: the second release, behind a pending fence, "
          "attaches none and nothing waits for the timeout",
          "[explicit-fences][kernel]") {
    FencedImport fi;
    auto &[env, b, watch] = fi;
    const int fds_before = settled_fds();
    cl_event go = env.make_user_event();
    cl_event rel[2] = {};
    const cl_ulong hits = bound_hits(env);
    for (int round = 0; round < 2; ++round) {
        const cl_uint pattern = 0x100u + round;
        REQUIRE(env.acquire(env.queue, 1, &b.mem, round == 0 ? 1 : 0, round == 0 ? &go : nullptr, nullptr) ==
                CL_SUCCESS);
        REQUIRE(clEnqueueFillBuffer(env.queue, b.mem, &pattern, sizeof pattern, 0, b.size, 0, nullptr, nullptr) ==
                CL_SUCCESS);
        REQUIRE(env.release(env.queue, 1, &b.mem, 0, nullptr, &rel[round]) == CL_SUCCESS);
        CHECK_FALSE(writer_pending(watch));  // the first release's fence waits for its acquire to run
    }
    REQUIRE(clSetUserEventStatus(go, CL_COMPLETE) == CL_SUCCESS);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    // The second release found the first one's step unfinished: it
    // attached nothing that the second acquire's SYNC START would have
    // waited on until the watchdog (the first one's fence went to the first
    // acquire, and its release signalled it before the second acquire ran).
    // Had it, only the watchdog would have let the pipeline finish: a
    // release fence expired, in the layer's counters.
    CHECK(bound_hits(env) == hits);
    CHECK_FALSE(writer_pending(watch));
    {
        DmabufView view(b.buf);
        view.begin(false);
        bool all = true;
        for (size_t i = 0; i < b.size / 4; ++i) all = all && view.words[i] == 0x101u;
        CHECK(all);
        view.end(false);
    }
    for (cl_event e : {rel[0], rel[1], go}) clReleaseEvent(e);
    CHECK(open_fds_toward(fds_before) == fds_before);
}

// The acquire waits for the fences in the dma-buf when it runs, the layer's
// own release fence never among them (issue #28 item 2).  Here a reader's
// fence (a display still scanning out, say) that enters the dma-buf after
// the pipelined release was enqueued: the acquire's write access waits for
// it (POLLOUT), and runs as soon as the reader is done, long before the
// fence timeout.  Needs a fence the test controls and can put next to the
// dma-buf's others: sw_sync (the virtual Gen9 models it; Debian's kernel
// has no CONFIG_SW_SYNC, and vgem refuses a fence on a buffer with one
// pending, -EBUSY).
TEST_CASE("explicit fences: a fence added to the dma-buf after the pipelined release was enqueued is waited for "
          "by the acquire, the release's own is not",
          "[explicit-fences]") {
    FencedImport fi;
    auto &[env, b, watch] = fi;
    const int fds_before = settled_fds();
    {
        const int timeline = open("/sys/kernel/debug/sync/sw_sync", O_RDWR | O_CLOEXEC);
        if (timeline < 0) SKIP("no sw_sync here (the virtual Gen9 models it under e2e-sim)");
        cl_event go = env.make_user_event(), let_go = env.make_user_event();
        cl_event acq = nullptr, rel = nullptr;
        REQUIRE(env.acquire(env.queue, 1, &b.mem, 1, &go, &acq) == CL_SUCCESS);
        REQUIRE(env.release(env.queue, 1, &b.mem, 1, &let_go, &rel) == CL_SUCCESS);
        CHECK_FALSE(writer_pending(watch));  // the release's fence waits for its acquire to run

        vgen9_sw_sync_create_fence_data d{};
        d.value = 1;
        std::strcpy(d.name, "late-reader");
        REQUIRE(ioctl(timeline, VGEN9_SW_SYNC_IOC_CREATE_FENCE, &d) == 0);
        dma_buf_import_sync_file im{};
        im.flags = DMA_BUF_SYNC_READ;
        im.fd = d.fence;
        REQUIRE(ioctl(watch, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &im) == 0);
        close(d.fence);  // the dma-buf holds the fence
        pollfd p{watch, POLLOUT, 0};
        CHECK(poll(&p, 1, 0) == 0);  // a writer would wait for the reader now

        REQUIRE(clSetUserEventStatus(go, CL_COMPLETE) == CL_SUCCESS);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        CHECK(status_of(acq) != CL_COMPLETE);  // waiting for the reader
        const cl_ulong hits = bound_hits(env);
        __u32 one = 1;
        REQUIRE(ioctl(timeline, VGEN9_SW_SYNC_IOC_INC, &one) == 0);  // the reader is done
        CHECK(clWaitForEvents(1, &acq) == CL_SUCCESS);
        CHECK(status_of(acq) == CL_COMPLETE);
        CHECK(bound_hits(env) == hits);
        CHECK(writer_pending(watch));  // the release's fence, attached once the acquire ran
        REQUIRE(clSetUserEventStatus(let_go, CL_COMPLETE) == CL_SUCCESS);
        CHECK(clWaitForEvents(1, &rel) == CL_SUCCESS);
        CHECK(writer_done_within(watch, 1000));
        CHECK(clFinish(env.queue) == CL_SUCCESS);
        for (cl_event e : {acq, rel, go, let_go}) clReleaseEvent(e);
        close(timeline);
    }
    CHECK(open_fds_toward(fds_before) == fds_before);
}

// The acquire waits for a producer's fence still pending when the release is
// enqueued.  SYNC START must follow that fence; the release hands its own
// fence to the acquire, which attaches it once it ran (issue #28 item 2:
// issue #20's opening ahead could not serve this case and attached nothing).
TEST_CASE("explicit fences: a pipelined release behind an acquire that waits for a producer's fence hands its fence "
          "to the acquire, and nothing waits for the fence timeout",
          "[explicit-fences][kernel]") {
    REQUIRE_DMABUF();
    if (env_is("CLDMABUF_EXPLICIT_FENCES", "off")) SKIP("CLDMABUF_EXPLICIT_FENCES=off");
    if (!can_make_pending_writer()) SKIP("needs the virtual Gen9 blitter or vgem fences for a pending writer");
    ClEnv env;
    ImportedBuffer a(env, 65536), b(env, 65536);
    REQUIRE_RELEASE_FENCES(env, b);
    const int watch = consumer_fd(b.buf);
    const int fds_before = settled_fds();
    const cl_uint pattern = 0x0dd5eedu;
    cl_event let_go = env.make_user_event();
    cl_event acq = nullptr, rel = nullptr;
    {
        PendingWriter writer(env, a, b);
        REQUIRE(env.acquire(env.queue, 1, &b.mem, 0, nullptr, &acq) == CL_SUCCESS);
        REQUIRE(clEnqueueFillBuffer(env.queue, b.mem, &pattern, sizeof pattern, 0, b.size, 0, nullptr, nullptr) ==
                CL_SUCCESS);
        REQUIRE(env.release(env.queue, 1, &b.mem, 1, &let_go, &rel) == CL_SUCCESS);
        CHECK(status_of(acq) != CL_COMPLETE);  // held by the producer
        const cl_ulong hits = bound_hits(env);
        writer.complete();
        CHECK(clWaitForEvents(1, &acq) == CL_SUCCESS);
        CHECK(bound_hits(env) == hits);
        // The release's fence, attached by the acquire once it ran: where the
        // producer is outside the layer (vgem).  The virtual Gen9's producer
        // is the layer's own blitter copy, whose step was unfinished on the
        // import when the release was enqueued: such a release attaches
        // nothing (layer/handoff/release_fences.hpp).
        if (!vgen9().loaded) CHECK(writer_pending(watch));
    }
    REQUIRE(clSetUserEventStatus(let_go, CL_COMPLETE) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &rel) == CL_SUCCESS);
    CHECK(writer_done_within(watch, 1000));
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    {
        DmabufView view(b.buf);
        view.begin(false);
        bool all = true;
        for (size_t i = 0; i < b.size / 4; ++i) all = all && view.words[i] == pattern;
        view.end(false);
        CHECK(all);
    }
    for (cl_event e : {acq, rel, let_go}) clReleaseEvent(e);
    CHECK(open_fds_toward(fds_before) == fds_before);
    close(watch);
}

// Two imports of one dma-buf (two fds of one memory, as a compositor and a
// filter that each import a frame): the release fence's rules hold for the
// dma-buf, not for one import.  Both acquired behind a user event and
// released before it completes: no release fence may be in the dma-buf
// before both acquires did their SYNC START, which waits for every fence of
// the dma-buf (the second import's START would wait for the first one's
// release fence, whose release waits for that START: a cycle that only the
// fence timeout breaks, failing the acquire).  Once both ran, consumers wait
// for the releases, and the releases keep both imports' writes.
TEST_CASE("explicit fences: two imports of one dma-buf, both acquires held, both released: no acquire waits for "
          "a release's fence",
          "[explicit-fences][alias][kernel]") {
    FencedImport fi;
    auto &[env, b, watch] = fi;
    cl_mem both[2] = {b.mem, nullptr};
    {
        const int fd = fcntl(b.buf.fd, F_DUPFD_CLOEXEC, 0);  // the dma-buf's second fd, owned by its import
        REQUIRE(fd >= 0);
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd),
                                           0};
        cl_int err = CL_SUCCESS;
        both[1] = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, b.size, nullptr, &err);
        if (err != CL_SUCCESS) close(fd);
        REQUIRE(err == CL_SUCCESS);
    }
    const size_t half = b.size / 2;
    const cl_uint first = 0x0a0a0a0au, second = 0x1b1b1b1bu;
    cl_event go = env.make_user_event(), let_go = env.make_user_event();
    cl_event acq = nullptr, rel[2] = {nullptr, nullptr};
    REQUIRE(env.acquire(env.queue, 2, both, 1, &go, &acq) == CL_SUCCESS);
    REQUIRE(clEnqueueFillBuffer(env.queue, both[0], &first, 4, 0, half, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clEnqueueFillBuffer(env.queue, both[1], &second, 4, half, half, 0, nullptr, nullptr) == CL_SUCCESS);
    SECTION("one release call for both") {
        REQUIRE(env.release(env.queue, 2, both, 1, &let_go, &rel[0]) == CL_SUCCESS);
    }
    SECTION("a release call each, the second import's first") {
        REQUIRE(env.release(env.queue, 1, &both[1], 1, &let_go, &rel[0]) == CL_SUCCESS);
        REQUIRE(env.release(env.queue, 1, &both[0], 0, nullptr, &rel[1]) == CL_SUCCESS);
    }
    CHECK_FALSE(writer_pending(watch));  // the external side owns it until the acquires ran
    const cl_ulong hits = bound_hits(env);
    REQUIRE(clSetUserEventStatus(go, CL_COMPLETE) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &acq) == CL_SUCCESS);
    CHECK(bound_hits(env) == hits);  // neither START waited for the timeout
    CHECK(writer_pending(watch));    // from the acquires' run on, consumers wait for the releases
    REQUIRE(clSetUserEventStatus(let_go, CL_COMPLETE) == CL_SUCCESS);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    CHECK_FALSE(writer_pending(watch));
    CHECK(bound_hits(env) == hits);
    {
        DmabufView view(b.buf);
        view.begin(false);
        size_t wrong = 0;
        for (size_t i = 0; i < b.size / 4; ++i) wrong += view.words[i] != (i < half / 4 ? first : second);
        view.end(false);
        CHECK(wrong == 0);
    }
    for (cl_event e : {acq, rel[0], rel[1], go, let_go})
        if (e) clReleaseEvent(e);
    clReleaseMemObject(both[1]);
}
