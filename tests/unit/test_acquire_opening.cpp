// An acquire's opening (fence wait + SYNC START, layer/handoff/acquire_opening)
// over a scripted kernel: done once, ahead by a release only when nothing
// can be pending (issue #28 item 2), else by its step, which then attaches
// the fence the release handed over (to the newest unopened acquire).
#include <catch2/catch_test_macros.hpp>

#include <poll.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "fake_kernel.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/handoff/acquire_opening.hpp"
#include "layer/core/import_state.hpp"
#include "layer/sync/dmabuf_bridge.hpp"

using namespace cldmabuf;

namespace {

struct Fixture {
    unit::FakeKernel k;
    unit::ScopedKernel scope{&k};
    std::shared_ptr<Import> import = std::make_shared<Import>();
    Fixture() {
        import->fd = 7;
        import->flags = CL_MEM_READ_WRITE;
    }
    ~Fixture() { forget_import_state(*import); }
    size_t sync_starts() const {
        size_t n = 0;
        for (const auto &[request, flags] : k.ioctls)
            if (request == DMABUF_IOCTL_SYNC && flags == (DMABUF_SYNC_START | DMABUF_SYNC_READ | DMABUF_SYNC_WRITE))
                ++n;
        return n;
    }
};

// A SYNC START that waits in the kernel: a fence came into the dma-buf
// after the release looked (the fake holds the call until let_go).
struct StuckStart {
    std::mutex m;
    std::condition_variable cv;
    bool inside = false, let_go = false;
    void hold() {
        std::unique_lock lock(m);
        inside = true;
        cv.notify_all();
        cv.wait(lock, [&] { return let_go; });
    }
    // Bounded only so that a layer that gets it wrong fails instead of hanging.
    bool wait_inside() {
        std::unique_lock lock(m);
        return cv.wait_for(lock, std::chrono::seconds(10), [&] { return inside; });
    }
    void release() {
        std::lock_guard lock(m);
        let_go = true;
        cv.notify_all();
    }
};

bool is_start(unsigned long request, uint64_t flags) {
    return request == DMABUF_IOCTL_SYNC && (flags & DMABUF_SYNC_END) == 0;
}

std::shared_ptr<Import> import_of_dmabuf(int fd, ino_t ino) {
    auto import = std::make_shared<Import>();
    import->fd = fd;
    import->flags = CL_MEM_READ_WRITE;
    import->app_fd_identity = true;  // one dma-buf per inode (layer/core/dmabuf_aliases.hpp)
    import->app_fd_id.dev = 1;
    import->app_fd_id.ino = ino;
    return import;
}

constexpr auto kLong = std::chrono::seconds(10);  // a bound for a wrong layer, never reached by a right one

}  // namespace

TEST_CASE("acquire opening: with nothing pending a release opens it ahead; the step then skips it",
          "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import, 0, nullptr);
    CHECK(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));
    CHECK(f.sync_starts() == 1);
    // Zero-timeout looks only: the decision's, and the claim's on its own fd right before the START.
    CHECK(f.k.polls == 2);
    CHECK(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));  // nothing left to open
    CHECK(open_in_step(*opening) == CL_SUCCESS);
    CHECK(f.sync_starts() == 1);  // no second START
    CHECK(f.k.polls == 2);        // and no fence wait
}

TEST_CASE("acquire opening: a pending fence hands the release's fence to the step, which starts and attaches",
          "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import, 0, nullptr);
    f.k.on_poll = [](struct pollfd *, int) { return 0; };  // a producer's fence pending
    CHECK_FALSE(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));
    CHECK(f.sync_starts() == 0);  // never before the producer is done
    f.k.on_poll = [](struct pollfd *p, int) { p->revents = p->events; return 1; };
    CHECK(open_in_step(*opening) == CL_SUCCESS);
    CHECK(f.sync_starts() == 1);
    // Done: a later release attaches its own.
    CHECK(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));
    CHECK(f.sync_starts() == 1);
}

TEST_CASE("acquire opening: a release waits for a step held at its opening (no fence pending) and attaches now",
          "[acquire-opening]") {
    // The step's thread is descheduled inside its fence wait for longer than
    // a short bound (a loaded machine, a VM under TCG): the release waits
    // for it rather than leave a consumer that looks right after it with no
    // fence to wait for.
    Fixture f;
    auto opening = make_acquire_opening(f.import, 0, nullptr);
    std::promise<void> inside;
    std::atomic<bool> told{false};
    f.k.on_poll = [&](struct pollfd *p, int timeout_ms) {
        if (timeout_ms > 0 && !told.exchange(true)) {  // the step's wait, not the release's look
            inside.set_value();
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
        }
        p->revents = p->events;
        return 1;
    };
    auto step = std::async(std::launch::async, [&] { return open_in_step(*opening); });
    inside.get_future().wait();
    CHECK(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));  // not handed over
    CHECK(step.get() == CL_SUCCESS);
    CHECK(f.sync_starts() == 1);
}

TEST_CASE("acquire opening: while its step is at it a release hands over; a destroyed opening takes nothing",
          "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import, 0, nullptr);
    bool opened_or_none = true, inside = false;
    f.k.on_poll = [&](struct pollfd *p, int) {
        // The step's own fence wait: a release enqueued meanwhile (its own
        // zero-timeout look comes back here too: answered, not re-entered).
        // With nothing pending the release waits (bounded) for the step,
        // which cannot end on this thread: it hands over at the bound.
        if (!inside) {
            inside = true;
            opened_or_none = open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>());
        }
        p->revents = p->events;
        return 1;
    };
    CHECK(open_in_step(*opening) == CL_SUCCESS);
    CHECK_FALSE(opened_or_none);  // handed to the running step
    CHECK(f.sync_starts() == 1);
    f.k.on_poll = [](struct pollfd *, int) { return 0; };
    auto dropped = make_acquire_opening(f.import, 0, nullptr);
    dropped.reset();  // the step's work destroyed without running
    CHECK(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));
    CHECK(f.sync_starts() == 1);
}

TEST_CASE("acquire opening: the newest unopened acquire of the import takes the fence", "[acquire-opening]") {
    Fixture f;
    auto first = make_acquire_opening(f.import, 0, nullptr);
    auto second = make_acquire_opening(f.import, 0, nullptr);
    f.k.on_poll = [](struct pollfd *, int) { return 0; };  // a fence pending: no opening ahead
    CHECK_FALSE(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));
    f.k.on_poll = [](struct pollfd *p, int) { p->revents = p->events; return 1; };
    CHECK(open_in_step(*second) == CL_SUCCESS);  // took it; the first has not opened
    f.k.on_poll = [](struct pollfd *, int) { return 0; };
    CHECK_FALSE(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));  // to the first
    f.k.on_poll = [](struct pollfd *p, int) { p->revents = p->events; return 1; };
    CHECK(open_in_step(*first) == CL_SUCCESS);
    CHECK(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));
}

TEST_CASE("acquire opening: a failed opening attaches nothing; the step reports the failure", "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import, 0, nullptr);
    f.k.on_poll = [](struct pollfd *, int) { return 0; };  // the producer's fence never signals
    CHECK_FALSE(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));
    CHECK(open_in_step(*opening) != CL_SUCCESS);
    CHECK(f.sync_starts() == 0);
}

TEST_CASE("release fence: signalled before it was attached, it never attaches", "[acquire-opening]") {
    Fixture f;
    sync::DmabufSignal fence;
    fence.signal();  // the release ran (its acquire failed or was dropped)
    CHECK(fence.attach(f.import->fd) == -ECANCELED);
    CHECK_FALSE(fence.pending());
}

TEST_CASE("acquire opening: a release's SYNC START that waits in the kernel holds no other dma-buf's step back",
          "[acquire-opening]") {
    Fixture f;
    auto other = import_of_dmabuf(8, 43);
    auto held = make_acquire_opening(f.import, 0, nullptr);
    auto free = make_acquire_opening(other, 0, nullptr);
    StuckStart stuck;
    f.k.on_ioctl = [&](int fd, unsigned long request, uint64_t flags) {
        if (is_start(request, flags) && fd != other->fd && fd != other->fd + 100) stuck.hold();
    };
    bool opened = false;
    std::thread release([&] { opened = open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()); });
    REQUIRE(stuck.wait_inside());
    // Another worker's acquire step, of another dma-buf, while that START is in the kernel.
    auto step = std::async(std::launch::async, [&] { return open_in_step(*free); });
    const bool step_done_while_stuck = step.wait_for(kLong) == std::future_status::ready;
    CHECK(step_done_while_stuck);
    stuck.release();
    release.join();
    CHECK(step.get() == CL_SUCCESS);
    CHECK(opened);
    forget_import_state(*other);
}

TEST_CASE("acquire opening: its step waits a bounded time for a release's SYNC START stuck in the kernel, then fails",
          "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import, 0, nullptr);
    StuckStart stuck;
    f.k.on_ioctl = [&](int, unsigned long request, uint64_t flags) {
        if (is_start(request, flags)) stuck.hold();
    };
    bool opened = false;
    std::thread release([&] { opened = open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()); });
    REQUIRE(stuck.wait_inside());
    auto step = std::async(std::launch::async, [&] { return open_in_step(*opening); });
    // Bounded by CLDMABUF_FENCE_TIMEOUT_MS (the step's own fence wait would
    // have met the same fence), while the release's START is still held.
    const bool step_done_while_stuck = step.wait_for(kLong) == std::future_status::ready;
    CHECK(step_done_while_stuck);
    stuck.release();
    release.join();
    CHECK(step.get() == CL_OUT_OF_RESOURCES);
    CHECK(f.sync_starts() == 1);  // the release's; the step started none of its own
    CHECK(opened);                // nothing unopened was left: the release attaches now
}

TEST_CASE("acquire opening: a release's START that ends after the step gave up publishes nothing; one that ends in "
          "time lets the step skip its own",
          "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import, 0, nullptr);
    StuckStart stuck;
    f.k.on_ioctl = [&](int, unsigned long request, uint64_t flags) {
        if (is_start(request, flags)) stuck.hold();
    };
    bool opened = false;
    std::thread release([&] { opened = open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()); });
    REQUIRE(stuck.wait_inside());
    auto step = std::async(std::launch::async, [&] { return open_in_step(*opening); });
    stuck.release();  // well within the step's bound
    release.join();
    CHECK(opened);
    CHECK(step.get() == CL_SUCCESS);
    CHECK(f.sync_starts() == 1);  // one START for the acquire, done ahead
}

TEST_CASE("acquire opening: an import torn down leaves no opening a release would start on", "[acquire-opening]") {
    Fixture f;
    f.import = import_of_dmabuf(7, 42);
    auto alias = import_of_dmabuf(9, 42);  // another import of the same dma-buf
    auto opening = make_acquire_opening(f.import, 0, nullptr);
    // The import's teardown (layer/import/record.cpp): its state goes, then its fds.
    forget_import_state(*f.import);
    f.import->fd = -1;
    CHECK(open_ahead_or_hand_over(*alias, std::make_shared<sync::DmabufSignal>()));
    CHECK(f.sync_starts() == 0);  // nothing opened ahead on a closed (or reused) number
    forget_import_state(*alias);
}

TEST_CASE("acquire opening: an opening retired when its step returned early is not opened ahead",
          "[acquire-opening]") {
    Fixture f;
    const std::vector<std::shared_ptr<AcquireOpening>> step{make_acquire_opening(f.import, 0, nullptr)};
    f.k.on_poll = [](struct pollfd *, int) { return 0; };  // a fence pending: the release hands over
    CHECK_FALSE(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));
    retire_openings(step);  // its work returned without opening (a failed wait list)
    f.k.on_poll = [](struct pollfd *p, int) { p->revents = p->events; return 1; };
    CHECK(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));  // nothing ahead any more
    CHECK(f.sync_starts() == 0);
}

TEST_CASE("acquire opening: a step dropped while a release's START for it is in the kernel goes once the release "
          "let go",
          "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import, 0, nullptr);
    StuckStart stuck;
    f.k.on_ioctl = [&](int, unsigned long request, uint64_t flags) {
        if (is_start(request, flags)) stuck.hold();
    };
    auto release = std::async(std::launch::async, [&] {
        return open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>());
    });
    REQUIRE(stuck.wait_inside());
    opening.reset();  // the step's work destroyed: the release holds the last reference
    stuck.release();
    const bool release_returned = release.wait_for(kLong) == std::future_status::ready;
    REQUIRE(release_returned);
    CHECK(release.get());
    CHECK(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));  // nothing left
}
