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
    return {i};
}

}  // namespace explore
