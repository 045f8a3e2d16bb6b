// The scenarios of the fast paths after a failure (f): a round whose user
// event fails, clFinish reports it, then a round with no wait list on the
// idle queue, whose acquire must complete at once (the layer's counters)
// and whose write must reach the dma-buf.
#include "chunks.hpp"

namespace explore {
namespace {

// An acquire with no wait list on a queue that clFinish left idle: done at
// once, the queue known idle (quiet), as on a queue that never failed.
Chunk fast_acquire(const std::string &mem, const std::string &ev) {
    return {"acquire " + mem + " (must be fast)", [=](World &w) {
                const auto before = layer_stats(w);
                cl_event e = nullptr;
                const cl_int err = w.acquire(w.queue, 1, &w.mems[mem], 0, nullptr, &e);
                if (err != CL_SUCCESS) w.fail("acquire " + mem + ": " + std::to_string(err));
                w.events[ev] = e;
                const auto after = layer_stats(w);
                const cl_ulong fast = after[CL_STATS_FAST_HANDOFFS_CLDMABUF] - before[CL_STATS_FAST_HANDOFFS_CLDMABUF];
                const cl_ulong quiet =
                    after[CL_STATS_QUIET_HANDOFFS_CLDMABUF] - before[CL_STATS_QUIET_HANDOFFS_CLDMABUF];
                const cl_ulong queued =
                    after[CL_STATS_QUEUED_HANDOFFS_CLDMABUF] - before[CL_STATS_QUEUED_HANDOFFS_CLDMABUF];
                if (fast != 1 || quiet != 1)
                    w.fail("the acquire after the reported failure was not fast on the idle queue: fast handoffs +" +
                           std::to_string(fast) + ", quiet +" + std::to_string(quiet) + ", queued +" +
                           std::to_string(queued));
            }};
}

}  // namespace

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
