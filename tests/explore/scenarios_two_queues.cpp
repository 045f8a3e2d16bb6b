// The scenarios of two queues over one dma-buf on the zero-copy route (the
// test ICD's default): d, two imports handed off on both queues at once, each
// writing its own words; e, a map/unmap of an acquired import, the unmap's
// event waited on by the other queue; h (and h-copy on the copy route), a
// map/unmap of one import interleaved with the other's handoff on the other
// queue.
#include <cstring>

#include "chunks.hpp"

namespace explore {
namespace {

constexpr size_t kHalf = kWords / 2;

// What d leaves in the dma-buf: words [0, half) of v1 (X's write on queue
// 0), the rest of v2 (Y's on queue 1).
uint32_t halves[kWords];

// e's mapping, and the SYNC END calls the virtual Gen9 had seen when the
// unmap was enqueued.
void *mapped = nullptr;
uint64_t ends_before_unmap = 0;

// The CPU writes words [first, first + count) of v1 through a blocking map
// (of those words) for writing.
Chunk map_and_write(const std::string &mem, size_t first = 0, size_t count = kWords) {
    const std::string words =
        count == kWords ? "" : " words " + std::to_string(first) + ".." + std::to_string(first + count - 1);
    return {"map " + mem + words + " (blocking), the CPU writes v1", [=](World &w) {
                cl_int err = CL_OUT_OF_RESOURCES;
                mapped = clEnqueueMapBuffer(w.queue, w.mems[mem], CL_TRUE, CL_MAP_WRITE, first * 4, count * 4, 0,
                                            nullptr, nullptr, &err);
                if (err != CL_SUCCESS || !mapped) return w.fail("map " + mem + ": " + std::to_string(err));
                std::memcpy(mapped, values[1] + first, count * 4);
            }};
}

Chunk unmap(const std::string &mem, const std::string &ev) {
    return {"unmap " + mem, [=](World &w) {
                if (!mapped) return;
                ends_before_unmap = sync_ends();
                w.facts["unmapped"] = true;
                cl_event e = nullptr;
                const cl_int err = clEnqueueUnmapMemObject(w.queue, w.mems[mem], mapped, 0, nullptr, &e);
                if (err != CL_SUCCESS) w.fail("unmap " + mem + ": " + std::to_string(err));
                w.events[ev] = e;
            }};
}

Chunk marker_on_other(const std::string &after, const std::string &ev) {
    return {"marker on q1 after " + after, [=](World &w) {
                cl_event wait = w.events[after], e = nullptr;
                const cl_int err = clEnqueueMarkerWithWaitList(w.other, wait ? 1 : 0, wait ? &wait : nullptr, &e);
                if (err != CL_SUCCESS) w.fail("marker on q1: " + std::to_string(err));
                w.events[ev] = e;
            }};
}

// Between two steps: the other queue's marker behind the unmap completed
// only after the layer's SYNC END of the map (the virtual Gen9 counted one
// since the unmap was enqueued).
void end_before_marker(World &w) {
    if (!w.facts["unmapped"] || w.facts["marker before END"]) return;
    auto m = w.events.find("after");
    if (m == w.events.end() || !m->second || status(m->second) != CL_COMPLETE) return;
    if (sync_ends() <= ends_before_unmap) {
        w.facts["marker before END"] = true;
        w.fail("the marker on q1 waiting on the unmap's event completed before the map's SYNC END ran");
    }
}

}  // namespace

std::vector<Scenario> two_queue_scenarios() {
    std::vector<Scenario> list;

    Scenario d;
    d.name = "d";
    d.summary = "two queues, imports X and Y of one dma-buf: X writes v1's first half on q0 behind a user event, "
                "Y v2's second half on q1";
    d.setup = [](World &w) {
        open_world(w);
        if (w.failures().empty()) open_second_queue(w);
        if (w.failures().empty()) import(w, "X");
        if (w.failures().empty()) import(w, "Y");
        for (size_t i = 0; i < kWords; ++i) halves[i] = i < kHalf ? values[1][i] : values[2][i];
    };
    d.program = [](World &) {
        return std::vector<Chunk>{user_event("ue"),
                                  acquire("X", "acqX", "ue"),
                                  write("X", 1, "wX", 0, 0, kHalf),
                                  release("X", "relX"),
                                  acquire("Y", "acqY", "", 1),
                                  write("Y", 2, "wY", 1, kHalf, kWords - kHalf),
                                  release("Y", "relY", 1),
                                  complete("ue", CL_COMPLETE),
                                  finish({{"acqX", true}, {"wX", true}, {"relX", true}}, true),
                                  finish({{"acqY", true}, {"wY", true}, {"relY", true}}, true, 1),
                                  release_everything()};
    };
    d.check = [](World &w) { check_end(w, halves); };
    list.push_back(d);

    Scenario e;
    e.name = "e";
    e.summary = "acquire X, map it, the CPU writes v1, unmap, release; a marker on q1 waits on the unmap's event";
    e.setup = [](World &w) {
        open_world(w);
        if (w.failures().empty()) open_second_queue(w);
        if (w.failures().empty()) import(w, "X");
    };
    // The map is blocking: the acquire's user event completes before it.
    e.program = [](World &) {
        return std::vector<Chunk>{user_event("ue"),
                                  acquire("X", "acq", "ue"),
                                  complete("ue", CL_COMPLETE),
                                  map_and_write("X"),
                                  unmap("X", "unmap"),
                                  marker_on_other("unmap", "after"),
                                  release("X", "rel"),
                                  finish({{"acq", true}, {"unmap", true}, {"rel", true}}, true),
                                  finish({{"after", true}}, true, 1),
                                  release_everything()};
    };
    e.between = end_before_marker;
    e.check = [](World &w) { check_end(w, 1); };
    list.push_back(e);

    // A map/unmap of X on q0 while Y is acquired, written and released on q1:
    // the CPU's words through the map and Y's kernel both land.
    Scenario h;
    h.name = "h";
    h.summary = "map X (blocking), the CPU writes v1's first half, unmap, release on q0, interleaved with Y's "
                "acquire/write v2's second half/release on q1";
    h.setup = d.setup;
    h.program = [](World &) {
        return std::vector<Chunk>{user_event("ue"),
                                  acquire("X", "acqX", "ue"),
                                  acquire("Y", "acqY", "", 1),
                                  write("Y", 2, "wY", 1, kHalf, kWords - kHalf),
                                  complete("ue", CL_COMPLETE),
                                  map_and_write("X", 0, kHalf),
                                  release("Y", "relY", 1),
                                  unmap("X", "unmap"),
                                  release("X", "relX"),
                                  finish({{"acqX", true}, {"unmap", true}, {"relX", true}}, true),
                                  finish({{"acqY", true}, {"wY", true}, {"relY", true}}, true, 1),
                                  release_everything()};
    };
    h.check = d.check;
    list.push_back(h);

    Scenario h_copy = h;
    h_copy.name = "h-copy";
    h_copy.summary = "h on the copy route (CLDMABUF_IMPORT=copy)";
    h_copy.env = {{"CLDMABUF_IMPORT", "copy"}};
    list.push_back(h_copy);
    return list;
}

}  // namespace explore
