// The scenarios of two queues, one of them out of order, over two imports of
// one dma-buf, each handed off twice in a row (g on the zero-copy route,
// g-copy on the copy route): X on queue 0 (in order) writes v1 then v2 to
// the first half behind a user event; Y on queue 1 (out of order, its
// commands chained by their events) writes v1 then v2 to the second half,
// v2 as two writes the queue may run in either order.
// The dma-buf ends with v2, every word: a release that wrote back a stale
// half, or lost the other import's, shows.
#include "chunks.hpp"

namespace explore {
namespace {

constexpr size_t kHalf = kWords / 2;

Scenario pipelined_twice(const std::string &name, const std::string &route_summary,
                         std::map<std::string, std::string> env, const std::string &icd_mode) {
    Scenario g;
    g.name = name;
    g.summary = route_summary + ", imports X and Y of one dma-buf: X acquire/write/release twice on q0 behind a "
                                "user event, Y twice on an out-of-order q1 chained by events";
    g.env = std::move(env);
    g.icd_mode = icd_mode;
    g.setup = [](World &w) {
        open_world(w);
        if (w.failures().empty()) open_second_queue(w, true);
        if (w.failures().empty()) import(w, "X");
        if (w.failures().empty()) import(w, "Y");
    };
    g.program = [](World &) {
        const size_t rest = kWords - kHalf;
        return std::vector<Chunk>{user_event("ue"),
                                  acquire("X", "acqX1", "ue"),
                                  write("X", 1, "wX1", 0, 0, kHalf),
                                  release("X", "relX1"),
                                  acquire("Y", "acqY1", "", 1),
                                  write("Y", 1, "wY1", 1, kHalf, rest, "acqY1"),
                                  release("Y", "relY1", 1, "wY1"),
                                  acquire("X", "acqX2", ""),
                                  write("X", 2, "wX2", 0, 0, kHalf),
                                  release("X", "relX2"),
                                  acquire("Y", "acqY2", "relY1", 1),
                                  write("Y", 2, "wY2", 1, kHalf, rest / 2, "acqY2"),
                                  write("Y", 2, "wY2b", 1, kHalf + rest / 2, rest - rest / 2, "acqY2"),
                                  release("Y", "relY2", 1, "wY2,wY2b"),
                                  complete("ue", CL_COMPLETE),
                                  finish({{"acqX1", true}, {"wX1", true}, {"relX1", true}, {"acqX2", true},
                                          {"wX2", true}, {"relX2", true}},
                                         true),
                                  finish({{"acqY1", true}, {"wY1", true}, {"relY1", true}, {"acqY2", true},
                                          {"wY2", true}, {"wY2b", true}, {"relY2", true}},
                                         true, 1),
                                  release_everything()};
    };
    g.check = [](World &w) { check_end(w, 2); };
    g.between = [](World &w) {
        fence_while_writing(w, "acqX2", "wX2", "relX2");
        fence_while_writing(w, "acqY1", "wY1", "relY1");
        fence_while_writing(w, "acqY2", "wY2", "relY2");
    };
    return g;
}

// g on the copy route: besides g's, a release must merge only what its
// device changed, also where the other import's release writes the dma-buf
// between an acquire's step and its Write (seed=22 is such a schedule).
Scenario pipelined_twice_copy() {
    return pipelined_twice("g-copy", "copy route (CLDMABUF_IMPORT=copy)", {{"CLDMABUF_IMPORT", "copy"}}, "");
}

}  // namespace

std::vector<Scenario> out_of_order_scenarios() {
    return {pipelined_twice("g", "zero-copy", {}, ""), pipelined_twice_copy()};
}

}  // namespace explore
