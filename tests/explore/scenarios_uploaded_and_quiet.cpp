// The scenarios of two fast ways of the handoff (layer/handoff/plan.hpp):
// n, the uploaded release (a copy-route import the device only reads,
// released at once once its acquire's upload completed, the kernels behind
// it still queued), beside another import of the same dma-buf written on
// the other queue; o, the quiet handoff with no marker (an acquire or
// release on a queue known idle, no event asked, no bytes moved), beside
// the other queue's handoff of the same dma-buf.  Each asks that the layer
// took its way in at least one schedule (Scenario::paths).
#include <cstring>

#include "chunks.hpp"

namespace explore {
namespace {

constexpr size_t kHalf = kWords / 2;

// o's end: words [0, half) of v1 (X on q0), the rest of v2 (Y on q1).
uint32_t halves[kWords];

cl_ulong delta(const std::array<cl_ulong, CL_STATS_COUNT_CLDMABUF> &before,
               const std::array<cl_ulong, CL_STATS_COUNT_CLDMABUF> &after, int counter) {
    return after[counter] - before[counter];
}

// The device reads `from` into `to` (a copy on q0 behind the event
// `after`, the kernel of n).
Chunk device_copy(const std::string &from, const std::string &to, const std::string &ev, const std::string &after) {
    return {"copy " + from + " -> " + to + " after " + after, [=](World &w) {
                cl_event e = nullptr;
                const cl_int err =
                    clEnqueueCopyBuffer(w.queue, w.mems[from], w.mems[to], 0, 0, kBytes, 1, &w.events[after], &e);
                if (err != CL_SUCCESS) w.fail("copy " + from + " -> " + to + ": " + std::to_string(err));
                w.events[ev] = e;
            }};
}

// clWaitForEvents on `ev` (the scheduler runs what it waits for).
Chunk wait_for(const std::string &ev) {
    return {"wait for " + ev, [=](World &w) {
                const cl_int err = clWaitForEvents(1, &w.events[ev]);
                if (err != CL_SUCCESS) w.fail("clWaitForEvents(" + ev + "): " + std::to_string(err));
            }};
}

// A release on q0 with no event.  Fast, not quiet, while `kernel` (the
// command after the acquire) has not completed: the uploaded way (the
// watched one would need that kernel complete).  A SYNC END done in the
// call (the virtual Gen9's count; nothing else runs while the application's
// thread is not waiting in the ICD) must follow the upload: `acq`, the
// acquire's event, which completes with its upload, has completed.
Chunk release_uploaded(const std::string &mem, const std::string &acq, const std::string &kernel) {
    return {"release " + mem + " (no event)", [=](World &w) {
                const auto before = layer_stats(w);
                const uint64_t ends = sync_ends();
                const cl_int err = w.release(w.queue, 1, &w.mems[mem], 0, nullptr, nullptr);
                if (err != CL_SUCCESS) w.fail("release " + mem + ": " + std::to_string(err));
                const auto after = layer_stats(w);
                if (sync_ends() > ends && status(w.events[acq]) != CL_COMPLETE)
                    w.fail("the release of " + mem + " did its SYNC END before its acquire's upload completed");
                if (delta(before, after, CL_STATS_FAST_HANDOFFS_CLDMABUF) == 1 &&
                    delta(before, after, CL_STATS_QUIET_HANDOFFS_CLDMABUF) == 0 && status(w.events[kernel]) != CL_COMPLETE)
                    w.facts["uploaded release"] = true;
            }};
}

// The CPU reads the plain buffer `mem` after clFinish: it must hold one
// version whole (the import's acquire saw `a` or `b`, not a mix).
Chunk read_whole(const std::string &mem, int a, int b) {
    return {"read " + mem + " (blocking)", [=](World &w) {
                static uint32_t got[kWords];
                const cl_int err = clEnqueueReadBuffer(w.queue, w.mems[mem], CL_TRUE, 0, kBytes, got, 0, nullptr, nullptr);
                if (err != CL_SUCCESS) return w.fail("read " + mem + ": " + std::to_string(err));
                if (std::memcmp(got, values[a], kBytes) == 0 || std::memcmp(got, values[b], kBytes) == 0) return;
                size_t of_a = 0, of_b = 0;
                for (size_t i = 0; i < kWords; ++i) {
                    of_a += got[i] == values[a][i];
                    of_b += got[i] == values[b][i];
                }
                w.fail("the kernel read a torn " + mem + ": " + std::to_string(of_a) + " words of v" + std::to_string(a) +
                       ", " + std::to_string(of_b) + " of v" + std::to_string(b) + " (of " + std::to_string(kWords) + ")");
            }};
}

// An acquire or release on q0 with no event.  Where the layer took the
// quiet way (its counter) it must have enqueued no marker: the test ICD
// holds no event more than before.
Chunk quiet_handoff(bool acquire, const std::string &mem) {
    const std::string what = acquire ? "acquire" : "release";
    return {what + " " + mem + " (no event)", [=](World &w) {
                const auto before = layer_stats(w);
                const cl_ulong events = icd_live_events(w);
                const cl_int err = (acquire ? w.acquire : w.release)(w.queue, 1, &w.mems[mem], 0, nullptr, nullptr);
                if (err != CL_SUCCESS) w.fail(what + " " + mem + ": " + std::to_string(err));
                const auto after = layer_stats(w);
                if (delta(before, after, CL_STATS_QUIET_HANDOFFS_CLDMABUF) != 1) return;
                w.facts["quiet " + what] = true;
                if (icd_live_events(w) != events)
                    w.fail("the quiet " + what + " with no event enqueued a command: the ICD holds " +
                           std::to_string(icd_live_events(w) - events) + " events more");
            }};
}

// The n scenarios' program: the same set-up and ending around `middle`,
// the order of X's release, Y's release and the user event that each
// scenario picks.
std::vector<Chunk> n_program(std::vector<Chunk> middle) {
    std::vector<Chunk> p{user_event("ue"), acquire("Y", "acqY", "", 1), acquire("X", "acqX", ""),
                         write("Y", 2, "wY", 1), device_copy("X", "P", "k", "ue")};
    for (Chunk &c : middle) p.push_back(std::move(c));
    for (Chunk c : {finish({{"acqX", true}, {"k", true}}, true),
                    finish({{"acqY", true}, {"wY", true}, {"relY", true}}, true, 1), read_whole("P", 0, 2),
                    release_everything()})
        p.push_back(std::move(c));
    return p;
}

}  // namespace

std::vector<Scenario> uploaded_and_quiet_scenarios() {
    std::vector<Scenario> list;

    // X read-only on the copy route: acquire, the device copies X into P
    // behind a user event, wait for the acquire (its upload, the ICD's
    // Write, ran), release with no event (the copy has not run: the
    // user event completes after it); Y of the same dma-buf acquired, written with
    // v2 and released on q1 around it.  P holds v0 or v2 whole; the
    // dma-buf ends with v2 (X writes nothing back).
    Scenario n;
    n.name = "n";
    n.summary = "copy route, X read-only: acquire X, copy X -> P, wait for the acquire, release X (no event: the "
                "uploaded way) on q0, while Y of the same dma-buf writes v2 on q1";
    n.env = {{"CLDMABUF_IMPORT", "copy"}};
    n.paths = {"uploaded release"};
    n.setup = [](World &w) {
        open_world(w);
        if (w.failures().empty()) open_second_queue(w);
        if (w.failures().empty()) import(w, "X", CL_MEM_READ_ONLY);
        if (w.failures().empty()) import(w, "Y");
        if (w.failures().empty()) plain_buffer(w, "P");
    };
    n.program = [](World &) {
        return n_program({wait_for("acqX"), release_uploaded("X", "acqX", "k"), complete("ue", CL_COMPLETE),
                          release("Y", "relY", 1)});
    };
    n.check = [](World &w) { check_end(w, 2); };
    list.push_back(n);

    // n with Y's release before X's: X's release finds Y's step unfinished
    // where it has not run (the queued way), takes the uploaded one where the
    // wait for X's acquire let it run.
    Scenario n2 = n;
    n2.name = "n-after-y";
    n2.summary = "n with Y's release enqueued before X's";
    n2.program = [](World &) {
        return n_program({release("Y", "relY", 1), wait_for("acqX"), release_uploaded("X", "acqX", "k"),
                          complete("ue", CL_COMPLETE)});
    };
    list.push_back(n2);

    // n without the wait: the release's own bounded wait for the upload
    // decides (uploaded where the Write ran by then, queued where not).
    Scenario n3 = n;
    n3.name = "n-no-wait";
    n3.summary = "n without the wait for X's acquire: the release waits for the upload itself";
    n3.program = [](World &) {
        return n_program({release_uploaded("X", "acqX", "k"), release("Y", "relY", 1), complete("ue", CL_COMPLETE)});
    };
    list.push_back(n3);

    // Zero-copy, X on q0 known idle (clFinish): acquire with no event (the
    // quiet way, no marker), write v1's first half, clFinish, release with
    // no event (quiet again), a write to a plain buffer and clFinish; Y of
    // the same dma-buf acquired behind a user event, writing v2's second
    // half and released on q1 around it.
    Scenario o;
    o.name = "o";
    o.summary = "zero-copy, q0 idle: acquire X and release X with no event (the quiet way, no marker) around a "
                "write of v1's first half and clFinish, beside Y's handoff of v2's second half on q1";
    o.paths = {"quiet acquire", "quiet release"};
    o.setup = [](World &w) {
        open_world(w);
        if (w.failures().empty()) open_second_queue(w);
        if (w.failures().empty()) import(w, "X");
        if (w.failures().empty()) import(w, "Y");
        if (w.failures().empty()) plain_buffer(w, "P");
        for (size_t i = 0; i < kWords; ++i) halves[i] = i < kHalf ? values[1][i] : values[2][i];
    };
    o.program = [](World &) {
        return std::vector<Chunk>{user_event("ue"),
                                  acquire("Y", "acqY", "ue", 1),
                                  write("Y", 2, "wY", 1, kHalf, kWords - kHalf),
                                  complete("ue", CL_COMPLETE),
                                  finish({}, true),
                                  quiet_handoff(true, "X"),
                                  write("X", 1, "wX", 0, 0, kHalf),
                                  release("Y", "relY", 1),
                                  finish({{"wX", true}}, true),
                                  quiet_handoff(false, "X"),
                                  write("P", 3, "wP"),
                                  finish({{"wP", true}}, true),
                                  finish({{"acqY", true}, {"wY", true}, {"relY", true}}, true, 1),
                                  release_everything()};
    };
    o.check = [](World &w) { check_end(w, halves); };
    list.push_back(o);
    return list;
}

}  // namespace explore
