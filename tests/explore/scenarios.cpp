// The scenarios of one queue and one dma-buf (a, b, c), and the list of
// every scenario: dma-bufs of the virtual Gen9 imported through the layer on
// the test ICD, acquire / write / release behind a user event, and what must
// hold after every schedule (chunks.hpp).
#include "chunks.hpp"

namespace explore {
namespace {

std::vector<Scenario> make() {
    std::vector<Scenario> list;
    auto one_import = [](World &w) {
        open_world(w);
        if (w.failures().empty()) import(w, "X");
    };

    Scenario a;
    a.name = "a";
    a.summary = "one import, acquire/write v1/release behind a user event that completes";
    a.setup = one_import;
    a.program = [](World &) {
        return std::vector<Chunk>{user_event("ue"), acquire("X", "acq", "ue"), write("X", 1, "w"),
                                  release("X", "rel"), complete("ue", CL_COMPLETE),
                                  finish({{"acq", true}, {"w", true}, {"rel", true}}, true), release_everything()};
    };
    a.check = [](World &w) { check_end(w, 1); };
    a.between = [](World &w) { fence_while_writing(w, "acq", "w"); };
    list.push_back(a);

    Scenario a_late = a;
    a_late.name = "a-late-callbacks";
    a_late.summary = "a, each event callback delivered as a step of its own";
    a_late.icd_mode = "late_callbacks";
    list.push_back(a_late);

    // The failed acquire, then a round that must succeed (and fence the dma-buf).
    Scenario b;
    b.name = "b";
    b.summary = "a with the user event failing, then a second round that must succeed";
    b.setup = one_import;
    b.program = [](World &) {
        return std::vector<Chunk>{user_event("ue1"),
                                  acquire("X", "acq1", "ue1"),
                                  write("X", 1, "w1"),
                                  release("X", "rel1"),
                                  complete("ue1", -1),
                                  finish({{"acq1", false}}, false),
                                  user_event("ue2"),
                                  acquire("X", "acq2", "ue2"),
                                  write("X", 2, "w2"),
                                  release("X", "rel2"),
                                  complete("ue2", CL_COMPLETE),
                                  finish({{"acq2", true}, {"w2", true}, {"rel2", true}}, true),
                                  release_everything()};
    };
    b.check = [](World &w) { check_end(w, 2); };
    b.between = [](World &w) { fence_while_writing(w, "acq2", "w2"); };
    list.push_back(b);

    Scenario b_pocl = b;
    b_pocl.name = "b-no-terminated-callbacks";
    b_pocl.summary = "b on an ICD that terminates the queue behind a failure and calls none of their callbacks (PoCL)";
    b_pocl.icd_mode = "no_terminated_callbacks,fail_queue_behind";
    // The layer resolves the terminated step without its callback (a sweep
    // at clFinish and the failed user event; layer/core/host_step.cpp).
    b_pocl.between = [](World &w) { fence_while_writing(w, "acq2", "w2"); };
    list.push_back(b_pocl);

    // Two imports of one dma-buf on the copy route, releases pipelined.
    Scenario c;
    c.name = "c";
    c.summary = "copy route, imports X and Y of one dma-buf, two pipelined rounds on X behind a user event";
    c.icd_mode = "discrete";
    c.setup = [](World &w) {
        open_world(w);
        if (w.failures().empty()) import(w, "X");
        if (w.failures().empty()) import(w, "Y");
    };
    c.program = [](World &) {
        return std::vector<Chunk>{user_event("ue"),
                                  acquire("X", "acq1", "ue"),
                                  write("X", 1, "w1"),
                                  release("X", "rel1"),
                                  acquire("X", "acq2", ""),
                                  write("X", 2, "w2"),
                                  release("X", "rel2"),
                                  complete("ue", CL_COMPLETE),
                                  finish({{"acq1", true}, {"w1", true}, {"rel1", true}, {"acq2", true},
                                          {"w2", true}, {"rel2", true}},
                                         true),
                                  release_everything()};
    };
    c.check = [](World &w) { check_end(w, 2); };
    list.push_back(c);

    // c with the imports counted large (a 1 KiB fast limit): X is registered
    // before its first acquire's facts, the acquires behind the user event
    // and the releases queued, the registration's Read and Write on the
    // staging's queue.
    Scenario c_registered = c;
    c_registered.name = "c-registered";
    c_registered.summary = "c with the imports counted large (CLDMABUF_DEBUG=small-copy-limit): registered imports";
    c_registered.env = {{"CLDMABUF_DEBUG", "worker-manual,small-copy-limit"}};
    list.push_back(c_registered);

    for (Scenario &s : two_queue_scenarios()) list.push_back(std::move(s));
    for (Scenario &s : fast_path_scenarios()) list.push_back(std::move(s));
    for (Scenario &s : out_of_order_scenarios()) list.push_back(std::move(s));
    for (Scenario &s : mapping_cache_scenarios()) list.push_back(std::move(s));
    for (Scenario &s : fence_scenarios()) list.push_back(std::move(s));
    for (Scenario &s : blitter_scenarios()) list.push_back(std::move(s));
    for (Scenario &s : uploaded_and_quiet_scenarios()) list.push_back(std::move(s));
    return list;
}

}  // namespace

const std::vector<Scenario> &scenarios() {
    static const std::vector<Scenario> list = make();
    return list;
}

}  // namespace explore
