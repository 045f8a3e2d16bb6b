// The scenario with the mapping cache on (i): two live imports X and Y of
// one dma-buf, X's acquire fails behind a user event while Y is handed off
// on the other queue, then X is released (its mapping parked) and a new
// import Z of the same dma-buf (the parked mapping's taker) writes.  The
// failed acquire's shield on X must not reach Y's pages (Y's v2 lands),
// X's write (v3) must never land, and Z's v1 must; the parked mappings must
// go once the dma-buf's last other fd closed (the end check).
#include "chunks.hpp"

namespace explore {
namespace {

constexpr size_t kHalf = kWords / 2;

// Z's v1 in the first half, Y's v2 in the second.
uint32_t expected[kWords];
// p: Z's v2 in the first half, X's v1 in the second.
uint32_t expected_p[kWords];

}  // namespace

std::vector<Scenario> mapping_cache_scenarios() {
    Scenario i;
    i.name = "i";
    i.summary = "mapping cache on, imports X and Y of one dma-buf: X's acquire fails (user event -1) while Y writes "
                "v2's second half on q1; X released, a new import Z writes v1's first half";
    i.env = {{"CLDMABUF_MAP_CACHE_MB", "64"}};
    i.setup = [](World &w) {
        open_world(w);
        if (w.failures().empty()) open_second_queue(w);
        if (w.failures().empty()) import(w, "X");
        if (w.failures().empty()) import(w, "Y");
        for (size_t k = 0; k < kWords; ++k) expected[k] = k < kHalf ? values[1][k] : values[2][k];
    };
    i.program = [](World &) {
        return std::vector<Chunk>{user_event("ue"),
                                  acquire("X", "acqX", "ue"),
                                  write("X", 3, "wX"),
                                  release("X", "relX"),
                                  acquire("Y", "acqY", "", 1),
                                  write("Y", 2, "wY", 1, kHalf, kWords - kHalf),
                                  release("Y", "relY", 1),
                                  complete("ue", -1),
                                  finish_reporting("acqX"),
                                  finish({{"acqY", true}, {"wY", true}, {"relY", true}}, true, 1),
                                  release_import("X"),
                                  import_now("Z"),
                                  acquire("Z", "acqZ", ""),
                                  write("Z", 1, "wZ", 0, 0, kHalf),
                                  release("Z", "relZ"),
                                  finish({{"acqZ", true}, {"wZ", true}, {"relZ", true}}, true),
                                  release_everything()};
    };
    i.check = [](World &w) { check_end(w, expected); };
    i.between = [](World &w) { fence_while_writing(w, "acqY", "wY", "relY"); };

    // A pool's frame on the copy route, counted large (a 1 KiB fast limit):
    // X is registered before its first acquire's facts, so that acquire
    // (no wait list) is done at once; its release is queued behind the
    // write.  X goes: its registration and the staging park with its
    // mapping; Z, the next import of the dma-buf, takes them back and is
    // acquired behind a user event.  The parked staging must go with the
    // parked mapping at the end (no ICD buffer left: the end check).
    Scenario p;
    p.name = "p";
    p.summary = "copy route, mapping cache on, imports counted large: X acquired at once (registered before its facts), "
                "v1 written, released, X released; Z (the registration and staging taken back) acquired behind a "
                "user event, v2's first half written, released";
    p.icd_mode = "discrete";
    p.env = {{"CLDMABUF_MAP_CACHE_MB", "64"}, {"CLDMABUF_DEBUG", "worker-manual,small-copy-limit"}};
    p.setup = [](World &w) {
        open_world(w);
        if (w.failures().empty()) import(w, "X");
        for (size_t k = 0; k < kWords; ++k) expected_p[k] = k < kHalf ? values[2][k] : values[1][k];
    };
    p.program = [](World &) {
        return std::vector<Chunk>{fast_acquire("X", "acqX", false),
                                  write("X", 1, "wX"),
                                  release("X", "relX"),
                                  finish({{"acqX", true}, {"wX", true}, {"relX", true}}, true),
                                  release_import("X"),
                                  import_now("Z"),
                                  user_event("ue"),
                                  acquire("Z", "acqZ", "ue"),
                                  write("Z", 2, "wZ", 0, 0, kHalf),
                                  release("Z", "relZ"),
                                  complete("ue", CL_COMPLETE),
                                  finish({{"acqZ", true}, {"wZ", true}, {"relZ", true}}, true),
                                  release_everything()};
    };
    p.check = [](World &w) { check_end(w, expected_p); };
    return {i, p};
}

}  // namespace explore
