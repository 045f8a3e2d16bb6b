// An acquire's opening (fence wait + SYNC START, layer/handoff/acquire_opening)
// over a scripted kernel: done by its step only, once (issue #28 item 2: a
// release never does it ahead), and a release's fence goes to the newest
// acquire of the import that has not finished its opening.
#include <catch2/catch_test_macros.hpp>

#include <poll.h>

#include <memory>

#include "fake_kernel.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/handoff/acquire_opening.hpp"
#include "layer/import_state.hpp"
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

}  // namespace

TEST_CASE("acquire opening: a release hands its fence to the pending acquire and does no SYNC START itself",
          "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import);
    CHECK(hand_fence_to_acquire(*f.import, std::make_shared<sync::DmabufSignal>()));
    CHECK(f.sync_starts() == 0);  // nothing opened before the step runs
    CHECK(f.k.polls == 0);        // and no look at the fences either
    CHECK(open_in_step(*opening) == CL_SUCCESS);
    CHECK(f.sync_starts() == 1);
    // Finished: a later release attaches its own.
    CHECK_FALSE(hand_fence_to_acquire(*f.import, std::make_shared<sync::DmabufSignal>()));
}

TEST_CASE("acquire opening: while its step waits for the fences a release still hands over; a destroyed opening "
          "takes nothing",
          "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import);
    bool handed_during_step = false;
    f.k.on_poll = [&](struct pollfd *p, int) {
        handed_during_step = hand_fence_to_acquire(*f.import, std::make_shared<sync::DmabufSignal>());
        p->revents = p->events;
        return 1;
    };
    CHECK(open_in_step(*opening) == CL_SUCCESS);
    CHECK(handed_during_step);
    CHECK(f.sync_starts() == 1);
    auto dropped = make_acquire_opening(f.import);
    dropped.reset();  // the step's work destroyed without running
    CHECK_FALSE(hand_fence_to_acquire(*f.import, std::make_shared<sync::DmabufSignal>()));
}

TEST_CASE("acquire opening: the newest unfinished acquire of the import takes the fence", "[acquire-opening]") {
    Fixture f;
    auto first = make_acquire_opening(f.import);
    auto second = make_acquire_opening(f.import);
    auto other_import = std::make_shared<Import>();
    other_import->fd = 8;
    auto other = make_acquire_opening(other_import);
    CHECK(hand_fence_to_acquire(*f.import, std::make_shared<sync::DmabufSignal>()));
    CHECK(open_in_step(*second) == CL_SUCCESS);  // took it; the first is still pending
    CHECK(hand_fence_to_acquire(*f.import, std::make_shared<sync::DmabufSignal>()));  // to the first
    CHECK(open_in_step(*first) == CL_SUCCESS);
    CHECK_FALSE(hand_fence_to_acquire(*f.import, std::make_shared<sync::DmabufSignal>()));
    other.reset();
    forget_import_state(*other_import);
}

TEST_CASE("acquire opening: a failed opening attaches nothing; the step reports the failure", "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import);
    CHECK(hand_fence_to_acquire(*f.import, std::make_shared<sync::DmabufSignal>()));
    f.k.on_poll = [](struct pollfd *, int) { return 0; };  // the producer's fence never signals
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
