// The quiet-queue record (layer/queue/quiet.hpp) without an ICD:
// which (queue, word) answers "still quiet" for a handoff that began its
// own command once (layer/queue/epoch.hpp: in-flight count in the low bits).  Queue handles are only compared, never called.
#include <catch2/catch_test_macros.hpp>

#include "layer/queue/epoch.hpp"
#include "layer/queue/quiet.hpp"

using namespace cldmabuf;

namespace {
cl_command_queue fake_queue(uintptr_t n) { return reinterpret_cast<cl_command_queue>(n * 64); }
// A word with `landed` commands in the epoch and `in_flight` in flight.
EpochWord word(uint64_t landed, uint64_t in_flight = 0) { return {landed * kEpochOne + in_flight}; }
}  // namespace

TEST_CASE("a quiet queue stays quiet for its next handoff only while nothing else began or ended", "[quiet]") {
    REQUIRE_FALSE(unseen_enqueues());
    const cl_command_queue q = fake_queue(1), other = fake_queue(2);
    CHECK(note_quiet_queue(q, word(1000), 0));             // clFinish: nothing of its own in flight
    CHECK(queue_still_quiet(q, word(1000, 1)));            // the handoff's own begin, nothing else
    CHECK_FALSE(queue_still_quiet(q, word(1000)));         // a caller that did not begin its command
    CHECK_FALSE(queue_still_quiet(q, word(1000, 2)));      // another command began and is in flight
    CHECK_FALSE(queue_still_quiet(q, word(1001, 1)));      // another command began and landed
    CHECK_FALSE(queue_still_quiet(other, word(1000, 1)));
    CHECK_FALSE(queue_still_quiet(nullptr, word(1000, 1)));
}

TEST_CASE("issue #28: a command in flight at clFinish keeps the queue from being quiet once it landed", "[quiet]") {
    // Thread B's kernel began (in flight) before thread A's clFinish read the
    // word; the finish returned before the kernel reached the queue.  A then
    // releases after B's enqueue returned: the kernel's end moved the word.
    const cl_command_queue q = fake_queue(6);
    REQUIRE(note_quiet_queue(q, word(500, 1), 0));
    CHECK_FALSE(queue_still_quiet(q, word(501, 1)));  // B's end, then A's begin
    // Had B's call not returned yet, the application could not have ordered
    // it before the release: quiet stays, as for any racing command.
    CHECK(queue_still_quiet(q, word(500, 2)));
}

TEST_CASE("a fast handoff's note counts its own command as ended", "[quiet]") {
    const cl_command_queue q = fake_queue(7);
    // The handoff read the word after its own begin: 700 landed, itself in flight.
    CHECK(note_quiet_queue(q, word(700, 1), 1));
    CHECK_FALSE(queue_still_quiet(q, word(700, 2)));  // its own command has not ended: a racing one began
    CHECK(queue_still_quiet(q, word(701, 1)));        // it ended (701), the next handoff began
    CHECK_FALSE(queue_still_quiet(q, word(702, 1)));  // one more command came and went
    CHECK_FALSE(note_quiet_queue(q, word(800, 0), 1)); // a recorder that claims an own command it did not begin
}

TEST_CASE("the record is one queue's: the newest note wins, an older one for the same queue does not", "[quiet]") {
    const cl_command_queue q = fake_queue(3), other = fake_queue(4);
    CHECK(note_quiet_queue(q, word(2000), 0));
    CHECK_FALSE(note_quiet_queue(q, word(1990), 0));  // a slower thread's older point
    CHECK(queue_still_quiet(q, word(2000, 1)));
    CHECK_FALSE(queue_still_quiet(q, word(1990, 1)));
    CHECK(note_quiet_queue(other, word(2005), 0));  // another queue: the record moves
    CHECK_FALSE(queue_still_quiet(q, word(2000, 1)));
    CHECK(queue_still_quiet(other, word(2005, 1)));
}

TEST_CASE("the word: begin puts a command in flight, end lands it, count_landed lands at once", "[quiet]") {
    const EpochWord before = read_epoch();
    begin_command();
    CHECK(read_epoch().in_flight() == before.in_flight() + 1);
    CHECK(read_epoch().epoch() == before.epoch());
    end_command();
    CHECK(read_epoch().in_flight() == before.in_flight());
    CHECK(read_epoch().epoch() == before.epoch() + 1);
    count_landed();
    CHECK(read_epoch().epoch() == before.epoch() + 2);
    {
        CountedCommand counted;
        CHECK(read_epoch().in_flight() == before.in_flight() + 1);
    }
    CHECK(read_epoch() == EpochWord{before.raw + 3 * kEpochOne});
}

// Last in the file: the flag stays set for the rest of the process (nothing
// else in unit-tests asks it).
TEST_CASE("an enqueue the layer cannot see ends every quiet", "[quiet]") {
    const cl_command_queue q = fake_queue(5);
    REQUIRE(note_quiet_queue(q, word(3000), 0));
    REQUIRE(queue_still_quiet(q, word(3000, 1)));
    note_unseen_enqueue("clEnqueueSomethingVendorKHR");
    CHECK(unseen_enqueues());
    CHECK_FALSE(queue_still_quiet(q, word(3000, 1)));
}
