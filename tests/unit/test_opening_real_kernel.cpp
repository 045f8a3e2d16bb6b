// An acquire's opening (layer/handoff/acquire_opening) over a real kernel's
// dma-bufs and fences, where test_acquire_opening.cpp scripts the kernel:
// issue #40 item 7 (a lock held across a kernel wait; a START on a stale fd)
// where the wait is the kernel's own.  The seam forwards every call to the
// kernel and, at the one moment the scripted tests pick (a release's SYNC
// START, after its look), puts an unsignalled writer's fence into the
// dma-buf, so that START really waits in dma_resv_wait_timeout.
//
// Dma-bufs and fences: CLDMABUF_TEST_DMABUF (tests/e2e/test_dmabufs.hpp) and
// tests/e2e/sw_sync_fence.hpp: in the VM a heap, udmabuf or vgem dma-buf and
// a vgem fence (Debian's 6.12 kernel); on the host the virtual Gen9's
// dma-bufs and its sw_sync, whose START waits as the kernel's does.  Run
// with CLDMABUF_FENCE_TIMEOUT_MS well under vgem's own 10 s bound.
#include <catch2/catch_test_macros.hpp>

#include <linux/dma-buf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "layer/base/kernel_ops.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/core/import_state.hpp"
#include "layer/handoff/acquire_opening.hpp"
#include "layer/sync/dmabuf_bridge.hpp"
#include "sw_sync_fence.hpp"
#include "test_dmabufs.hpp"
#include "vgen9_control.hpp"

using namespace cldmabuf;
using Clock = std::chrono::steady_clock;

namespace {

struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;
    bool operator==(const FileId &) const = default;
};

FileId id_of(KernelOps &k, int fd) {
    struct stat st {};
    if (k.fstat(fd, &st) != 0) return {};
    return {st.st_dev, st.st_ino};
}

// The kernel, seen through the seam: every call goes on to what the seam
// held before; SYNC STARTs are counted per dma-buf (the layer STARTs on its
// own dup of an import's fd, so by the file, not the number), and the first
// START on `hold_at` first puts `fence` in, after the layer's look.
class WatchedKernel final : public KernelOps {
public:
    explicit WatchedKernel(KernelOps &real) : real_(real) {}

    FileId hold_at{};
    SwSyncWriteFence *fence = nullptr;
    // Set once the fence is in (after the attach's writes: the test's thread
    // signals the same fence later), with whether it went in.
    std::atomic<bool> fence_in{false};
    bool attached = false;

    int starts_on(FileId id) {
        std::lock_guard lock(m_);
        int n = 0;
        for (const FileId &s : starts_) n += s == id;
        return n;
    }

    int ioctl(int fd, unsigned long request, void *arg) override {
        if (request == DMA_BUF_IOCTL_SYNC && !(static_cast<dma_buf_sync *>(arg)->flags & DMA_BUF_SYNC_END)) {
            const FileId id = id_of(real_, fd);
            {
                std::lock_guard lock(m_);
                starts_.push_back(id);
            }
            if (fence && id == hold_at && !claimed_.exchange(true)) {
                attached = fence->attach(fd);  // not REQUIRE: this is the layer's thread
                fence_in.store(true, std::memory_order_release);
            }
        }
        return real_.ioctl(fd, request, arg);
    }
    int open(const char *path, int flags) override { return real_.open(path, flags); }
    int close(int fd) override { return real_.close(fd); }
    int dup(int fd) override { return real_.dup(fd); }
    void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset) override {
        return real_.mmap(addr, len, prot, flags, fd, offset);
    }
    int munmap(void *addr, size_t len) override { return real_.munmap(addr, len); }
    int poll(struct pollfd *fds, nfds_t nfds, int timeout_ms) override { return real_.poll(fds, nfds, timeout_ms); }
    off_t lseek(int fd, off_t offset, int whence) override { return real_.lseek(fd, offset, whence); }
    int fstatfs(int fd, struct statfs *buf) override { return real_.fstatfs(fd, buf); }
    std::vector<std::string> list_dir(const char *path) override { return real_.list_dir(path); }
    int fstat(int fd, struct stat *buf) override { return real_.fstat(fd, buf); }
    int stat(const char *path, struct stat *buf) override { return real_.stat(path, buf); }
    std::string real_path(const char *path) override { return real_.real_path(path); }
    int read_file(const char *path, std::string *out) override { return real_.read_file(path, out); }
    int memfd_create(const char *name, unsigned flags) override { return real_.memfd_create(name, flags); }
    int ftruncate(int fd, off_t length) override { return real_.ftruncate(fd, length); }
    int add_seals(int fd, int seals) override { return real_.add_seals(fd, seals); }

private:
    KernelOps &real_;
    std::atomic<bool> claimed_{false};
    std::mutex m_;
    std::vector<FileId> starts_;
};

struct Watched {
    WatchedKernel k{kernel()};
    Watched() { set_kernel(&k); }
    ~Watched() { set_kernel(nullptr); }
};

// An import of a real dma-buf as the import entry records it (its fd, and
// the file's identity, which keys the dma-buf's state).
struct RealImport {
    e2e::Dmabuf buf;
    std::shared_ptr<Import> import = std::make_shared<Import>();
    FileId id;
    explicit RealImport(KernelOps &k, e2e::Dmabuf b) : buf(std::move(b)) {
        import->fd = buf.fd;
        import->flags = CL_MEM_READ_WRITE;
        id = id_of(k, buf.fd);
        import->app_fd_identity = true;
        import->app_fd_id.dev = id.dev;
        import->app_fd_id.ino = id.ino;
    }
    ~RealImport() { forget_import_state(*import); }
};

// Signals the fence before the futures declared ahead of it are joined: a
// layer that got it wrong fails its checks instead of hanging the test.
struct SignalOnExit {
    SwSyncWriteFence &fence;
    ~SignalOnExit() { fence.signal(); }
};

std::chrono::milliseconds fence_bound() { return std::chrono::milliseconds(fence_timeout_ms()); }

// A release of `held` on another thread, returned once its START has put
// the held fence in (the START then waits in the kernel).
std::future<bool> release_held_at_start(WatchedKernel &k, const RealImport &held) {
    auto release = std::async(std::launch::async, [&held] {
        return open_ahead_or_hand_over(*held.import, std::make_shared<sync::DmabufSignal>());
    });
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (!k.fence_in && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(k.fence_in);
    REQUIRE(k.attached);
    return release;
}

void require_real_fences() {
    REQUIRE_DMABUF();
    if (!cldmabuf::test::vgen9().loaded && !SwSyncWriteFence::possible())
        SKIP("no fence the test can hold here (neither the virtual Gen9's sw_sync nor vgem)");
    // The default (1000 ms) and the runs' 500 ms stay well under vgem's own 10 s.
    REQUIRE(fence_timeout_ms() < 5000);
}

}  // namespace

TEST_CASE("opening on a real kernel: a release's START held by a fence that came after its look holds no other "
          "dma-buf's step back; its own dma-buf's step gives up at the bound",
          "[opening-real-kernel]") {
    require_real_fences();
    Watched w;
    RealImport held(w.k, e2e::make_dmabuf(65536)), other(w.k, e2e::make_dmabuf(65536));
    SwSyncWriteFence fence;
    w.k.hold_at = held.id;
    w.k.fence = &fence;
    auto held_opening = make_acquire_opening(held.import, 0, nullptr);
    auto other_opening = make_acquire_opening(other.import, 0, nullptr);
    std::future<bool> release;
    std::future<cl_int> step, own;
    SignalOnExit guard{fence};

    // The fence went in as the release's START began; give the kernel a
    // moment, then the START must still be waiting there.
    release = release_held_at_start(w.k, held);
    CHECK(release.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout);

    // Another worker's acquire step, of another dma-buf: it looks, STARTs
    // and returns while that START is in the kernel.
    step = std::async(std::launch::async, [&] { return open_in_step(*other_opening); });
    const auto t0 = Clock::now();
    REQUIRE(step.wait_for(std::chrono::seconds(3)) == std::future_status::ready);
    INFO("the other dma-buf's step took " << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count()
                                          << " ms");
    CHECK(step.get() == CL_SUCCESS);
    CHECK(w.k.starts_on(other.id) == 1);

    // The held dma-buf's own step waits for that START, bounded by the fence
    // timeout, and fails there; the START is still in the kernel.
    own = std::async(std::launch::async, [&] { return open_in_step(*held_opening); });
    const auto t1 = Clock::now();
    REQUIRE(own.wait_for(fence_bound() + std::chrono::seconds(3)) == std::future_status::ready);
    const auto waited = Clock::now() - t1;
    CHECK(own.get() == CL_OUT_OF_RESOURCES);
    CHECK(waited >= fence_bound() / 2);
    CHECK(release.wait_for(std::chrono::milliseconds(0)) == std::future_status::timeout);

    // The producer signals: the kernel lets the START go, the release returns.
    fence.signal();
    REQUIRE(release.wait_for(std::chrono::seconds(3)) == std::future_status::ready);
    CHECK(release.get());
    CHECK(w.k.starts_on(held.id) == 1);  // the release's; the step did none of its own
}

TEST_CASE("opening on a real kernel: a release's START that the fence lets go in time lets the step skip its own",
          "[opening-real-kernel]") {
    require_real_fences();
    Watched w;
    RealImport held(w.k, e2e::make_dmabuf(65536));
    SwSyncWriteFence fence;
    w.k.hold_at = held.id;
    w.k.fence = &fence;
    auto opening = make_acquire_opening(held.import, 0, nullptr);
    std::future<bool> release;
    std::future<cl_int> step;
    SignalOnExit guard{fence};
    release = release_held_at_start(w.k, held);
    step = std::async(std::launch::async, [&] { return open_in_step(*opening); });
    std::this_thread::sleep_for(fence_bound() / 5);
    CHECK(step.wait_for(std::chrono::milliseconds(0)) == std::future_status::timeout);  // it waits for the START
    fence.signal();
    REQUIRE(release.wait_for(std::chrono::seconds(3)) == std::future_status::ready);
    CHECK(release.get());
    REQUIRE(step.wait_for(std::chrono::seconds(3)) == std::future_status::ready);
    CHECK(step.get() == CL_SUCCESS);
    CHECK(w.k.starts_on(held.id) == 1);  // one START for the acquire, done ahead
}

TEST_CASE("opening on a real kernel: an import torn down leaves no opening a release would start on, its fd number "
          "now another dma-buf's",
          "[opening-real-kernel]") {
    REQUIRE_DMABUF();
    Watched w;
    auto gone = std::make_unique<RealImport>(w.k, e2e::make_dmabuf(65536));
    const FileId gone_id = gone->id;
    const int number = gone->buf.fd;
    // Another import of the same dma-buf (a second fd of one memory).
    e2e::Dmabuf alias_fd;
    alias_fd.fd = gone->buf.dup_fd();
    RealImport alias(w.k, std::move(alias_fd));
    REQUIRE(alias.id == gone_id);

    auto opening = make_acquire_opening(gone->import, 0, nullptr);
    // The import's teardown (layer/import/record.cpp): its state goes, then its fds.
    forget_import_state(*gone->import);
    gone->import->fd = -1;
    gone.reset();  // closes `number`
    RealImport reused(w.k, e2e::make_dmabuf(65536));
    INFO("the torn-down import's fd " << number << ", the next dma-buf's " << reused.buf.fd);
    CHECK(open_ahead_or_hand_over(*alias.import, std::make_shared<sync::DmabufSignal>()));
    CHECK(w.k.starts_on(reused.id) == 0);  // nothing opened ahead on the reused number
    CHECK(w.k.starts_on(gone_id) == 0);    // nor on the dma-buf itself: its acquire's import is gone
    opening.reset();
}
