// An acquire's opening (fence wait + SYNC START, layer/handoff/acquire_opening)
// done by its step, or ahead by a release that wants to attach its fence,
// over a scripted kernel: done once either way, never ahead while a fence is
// pending or the step is at it.
#include <catch2/catch_test_macros.hpp>

#include <poll.h>

#include <memory>

#include "fake_kernel.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/handoff/acquire_opening.hpp"
#include "layer/import_state.hpp"

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

TEST_CASE("acquire opening: a release opens it ahead when no fence is pending; the step then skips it",
          "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import);
    CHECK(open_acquires_ahead(*f.import));
    CHECK(f.sync_starts() == 1);
    CHECK(f.k.polls == 1);  // the zero-timeout look
    CHECK(open_acquires_ahead(*f.import));  // a second release: nothing more to do
    CHECK(f.sync_starts() == 1);
    CHECK(open_in_step(*opening) == CL_SUCCESS);
    CHECK(f.sync_starts() == 1);  // no second START
    CHECK(f.k.polls == 1);        // and no fence wait
}

TEST_CASE("acquire opening: a pending fence leaves it to the step, which waits and starts itself",
          "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import);
    f.k.on_poll = [](struct pollfd *, int) { return 0; };  // a writer pending
    CHECK_FALSE(open_acquires_ahead(*f.import));
    CHECK(f.sync_starts() == 0);
    f.k.on_poll = [](struct pollfd *p, int) { p->revents = p->events; return 1; };
    CHECK(open_in_step(*opening) == CL_SUCCESS);
    CHECK(f.sync_starts() == 1);
}

TEST_CASE("acquire opening: never ahead while its step is at it; done or destroyed openings hold nothing back",
          "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import);
    bool ahead_during_step = true;
    f.k.on_poll = [&](struct pollfd *p, int) {
        // The step's own fence wait: a release enqueued meanwhile must not attach.
        ahead_during_step = open_acquires_ahead(*f.import);
        p->revents = p->events;
        return 1;
    };
    CHECK(open_in_step(*opening) == CL_SUCCESS);
    CHECK_FALSE(ahead_during_step);
    CHECK(f.sync_starts() == 1);
    f.k.on_poll = [](struct pollfd *, int) { return 0; };  // no look is needed for a done one
    CHECK(open_acquires_ahead(*f.import));
    opening.reset();  // the step's work destroyed
    CHECK(open_acquires_ahead(*f.import));
    CHECK(f.sync_starts() == 1);
}

TEST_CASE("acquire opening: a START that fails ahead decides nothing: the step starts itself",
          "[acquire-opening]") {
    Fixture f;
    auto opening = make_acquire_opening(f.import);
    f.k.ioctl_errnos = {EIO};
    CHECK_FALSE(open_acquires_ahead(*f.import));
    CHECK(open_in_step(*opening) == CL_SUCCESS);
    CHECK(f.sync_starts() == 2);  // the failed one ahead, then the step's
}
