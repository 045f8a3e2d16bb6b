// The quiet-queue record (layer/handoff/quiet_queue.hpp) without an ICD:
// which (queue, epoch) answers "still quiet" for a handoff that counted
// itself once.  Queue handles are only compared, never called.
#include <catch2/catch_test_macros.hpp>

#include "layer/enqueue_epoch.hpp"
#include "layer/handoff/quiet_queue.hpp"

using namespace cldmabuf;

namespace {
cl_command_queue fake_queue(uintptr_t n) { return reinterpret_cast<cl_command_queue>(n * 64); }
}  // namespace

TEST_CASE("a quiet queue stays quiet for its next handoff only while nothing else was counted") {
    REQUIRE_FALSE(unseen_enqueues());
    const cl_command_queue q = fake_queue(1), other = fake_queue(2);
    note_quiet_queue(q, 1000);
    CHECK(queue_still_quiet(q, 1001));        // the handoff's own count, nothing else
    CHECK_FALSE(queue_still_quiet(q, 1000));  // a caller that did not count itself
    CHECK_FALSE(queue_still_quiet(q, 1002));  // one more command came between
    CHECK_FALSE(queue_still_quiet(other, 1001));
    CHECK_FALSE(queue_still_quiet(nullptr, 1001));
}

TEST_CASE("the record is one queue's: the newest note wins, an older one for the same queue does not") {
    const cl_command_queue q = fake_queue(3), other = fake_queue(4);
    note_quiet_queue(q, 2000);
    note_quiet_queue(q, 1990);  // a slower thread's older point
    CHECK(queue_still_quiet(q, 2001));
    CHECK_FALSE(queue_still_quiet(q, 1991));
    note_quiet_queue(other, 2005);  // another queue: the record moves
    CHECK_FALSE(queue_still_quiet(q, 2001));
    CHECK(queue_still_quiet(other, 2006));
}

// Last in the file: the flag stays set for the rest of the process (nothing
// else in unit-tests asks it).
TEST_CASE("an enqueue the layer cannot see ends every quiet") {
    const cl_command_queue q = fake_queue(5);
    note_quiet_queue(q, 3000);
    REQUIRE(queue_still_quiet(q, 3001));
    note_unseen_enqueue("clEnqueueSomethingVendorKHR");
    CHECK(unseen_enqueues());
    CHECK_FALSE(queue_still_quiet(q, 3001));
}
