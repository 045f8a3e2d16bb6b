// An acquire's opening (fence wait + SYNC START, layer/handoff/acquire_opening)
// over a scripted kernel: done once, ahead by a release only when nothing
// can be pending (issue #28 item 2), else by its step, which then attaches
// the fence the release handed over (to the newest unopened acquire).
#include <catch2/catch_test_macros.hpp>

#include <poll.h>

#include <memory>

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

}  // namespace

TEST_CASE("acquire opening: with nothing pending a release opens it ahead; the step then skips it",
          "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import, 0, nullptr);
    CHECK(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));
    CHECK(f.sync_starts() == 1);
    CHECK(f.k.polls == 1);  // the zero-timeout look
    CHECK(open_ahead_or_hand_over(*f.import, std::make_shared<sync::DmabufSignal>()));  // nothing left to open
    CHECK(open_in_step(*opening) == CL_SUCCESS);
    CHECK(f.sync_starts() == 1);  // no second START
    CHECK(f.k.polls == 1);        // and no fence wait
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
