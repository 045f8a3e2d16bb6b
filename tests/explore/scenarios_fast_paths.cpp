// The scenarios of the fast paths after a failure (f): a round whose user
// event fails, clFinish reports it, then a round with no wait list on the
// idle queue, whose acquire must complete at once (the layer's counters)
// and whose write must reach the dma-buf.
#include "chunks.hpp"

namespace explore {

std::vector<Scenario> fast_path_scenarios() {
    std::vector<Scenario> list;
    Scenario f;
    f.name = "f";
    f.summary = "the user event fails, clFinish reports it; the next round's acquire (no wait list) is fast and v2 "
                "lands";
    f.setup = [](World &w) {
        open_world(w);
        if (w.failures().empty()) import(w, "X");
    };
    f.program = [](World &) {
        return std::vector<Chunk>{user_event("ue"),
                                  acquire("X", "acq1", "ue"),
                                  write("X", 1, "w1"),
                                  release("X", "rel1"),
                                  complete("ue", -1),
                                  finish_reporting("acq1"),
                                  fast_acquire("X", "acq2"),
                                  write("X", 2, "w2"),
                                  release("X", "rel2"),
                                  finish({{"acq2", true}, {"w2", true}, {"rel2", true}}, true),
                                  release_everything()};
    };
    f.check = [](World &w) { check_end(w, 2); };
    list.push_back(f);

    // The same on an ICD that terminates the queue behind the failure and
    // calls none of those commands' callbacks (PoCL).
    Scenario f_pocl = f;
    f_pocl.name = "f-no-terminated-callbacks";
    f_pocl.summary = "f on an ICD that terminates the queue behind a failure and calls none of their callbacks (PoCL)";
    f_pocl.icd_mode = "no_terminated_callbacks,fail_queue_behind";
    list.push_back(f_pocl);
    return list;
}

}  // namespace explore
