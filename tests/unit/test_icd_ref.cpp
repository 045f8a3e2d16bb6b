// layer/core/icd_ref.hpp over a fake ICD that counts each handle's retains
// and releases: an adopted reference is released once and never retained,
// retain() takes one of its own, a move carries the one reference, a
// hand_off() leaves it to the receiver, out() releases what was held before
// the ICD writes the new one.
#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <map>
#include <utility>

#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/entry/dispatch_table.hpp"

using namespace cldmabuf;

namespace {

std::map<const void *, int> retains, releases;

cl_int CL_API_CALL count_retain_event(cl_event e) { return ++retains[e], CL_SUCCESS; }
cl_int CL_API_CALL count_release_event(cl_event e) { return ++releases[e], CL_SUCCESS; }
cl_int CL_API_CALL count_retain_mem(cl_mem m) { return ++retains[m], CL_SUCCESS; }
cl_int CL_API_CALL count_release_mem(cl_mem m) { return ++releases[m], CL_SUCCESS; }
cl_int CL_API_CALL count_retain_queue(cl_command_queue q) { return ++retains[q], CL_SUCCESS; }
cl_int CL_API_CALL count_release_queue(cl_command_queue q) { return ++releases[q], CL_SUCCESS; }
cl_int CL_API_CALL count_retain_context(cl_context c) { return ++retains[c], CL_SUCCESS; }
cl_int CL_API_CALL count_release_context(cl_context c) { return ++releases[c], CL_SUCCESS; }

void over_counting_icd() {
    static cl_icd_dispatch target = [] {
        cl_icd_dispatch t{};
        t.clRetainEvent = count_retain_event;
        t.clReleaseEvent = count_release_event;
        t.clRetainMemObject = count_retain_mem;
        t.clReleaseMemObject = count_release_mem;
        t.clRetainCommandQueue = count_retain_queue;
        t.clReleaseCommandQueue = count_release_queue;
        t.clRetainContext = count_retain_context;
        t.clReleaseContext = count_release_context;
        return t;
    }();
    init_dispatch(&target, sizeof(cl_icd_dispatch) / sizeof(void *));
    retains.clear();
    releases.clear();
}

template <typename T>
T fake(uintptr_t v) {
    return reinterpret_cast<T>(v);
}

}  // namespace

TEST_CASE("an adopted reference is released once, never retained", "[icd-ref]") {
    over_counting_icd();
    const auto e = fake<cl_event>(0xE1);
    {
        IcdEvent held(e);
        CHECK(held.get() == e);
        CHECK(held.as_list()[0] == e);
        CHECK(releases[e] == 0);
    }
    CHECK(retains[e] == 0);
    CHECK(releases[e] == 1);
    { IcdEvent empty; }
    CHECK(releases.size() == 1);  // an empty holder calls nothing
}

TEST_CASE("retain takes a reference of its own; a move carries one", "[icd-ref]") {
    over_counting_icd();
    const auto m = fake<cl_mem>(0x3E3);
    {
        IcdMem first = IcdMem::retain(m);
        CHECK(retains[m] == 1);
        IcdMem second = std::move(first);
        CHECK_FALSE(first);
        CHECK(second.get() == m);
        IcdMem third;
        third = std::move(second);
        CHECK(releases[m] == 0);
    }
    CHECK(retains[m] == 1);
    CHECK(releases[m] == 1);
}

TEST_CASE("hand_off leaves the reference to the receiver", "[icd-ref]") {
    over_counting_icd();
    const auto q = fake<cl_command_queue>(0x9E);
    cl_command_queue given = nullptr;
    {
        IcdQueue held(q);
        given = held.hand_off();
        CHECK_FALSE(held);
    }
    CHECK(given == q);
    CHECK(releases[q] == 0);
}

TEST_CASE("out releases what was held before the ICD writes the new reference", "[icd-ref]") {
    over_counting_icd();
    const auto old_event = fake<cl_event>(0x01D), new_event = fake<cl_event>(0x0E3);
    IcdEvent held(old_event);
    cl_event *slot = held.out();
    CHECK(releases[old_event] == 1);
    CHECK(*slot == nullptr);
    *slot = new_event;  // what an enqueue does with its `event` argument
    CHECK(held.get() == new_event);
    held.reset();
    CHECK(releases[new_event] == 1);
    held.reset();
    CHECK(releases[new_event] == 1);
}

TEST_CASE("a list of references releases each once and hands the ICD a plain list", "[icd-ref]") {
    over_counting_icd();
    const auto a = fake<cl_event>(0xA), b = fake<cl_event>(0xB);
    const auto c = fake<cl_context>(0xC);
    {
        IcdEvents events;
        events.add(IcdEvent(a));
        events.add(IcdEvent());  // nothing to hold
        const cl_event others[] = {b};
        events.retain_all(others);
        REQUIRE(events.size() == 2);
        CHECK(events.data()[0] == a);
        CHECK(events.data()[1] == b);
        IcdEvents moved = std::move(events);
        CHECK(events.empty());
        CHECK(releases[a] == 0);
        IcdEvent last = moved.take_back();
        CHECK(last.get() == b);
        CHECK(moved.size() == 1);
        CHECK(releases[b] == 0);
        moved.add(std::move(last));
        moved.release_if([b](cl_event e) { return e == b; });
        CHECK(releases[b] == 1);
        CHECK(moved.size() == 1);
        IcdContext context = IcdContext::retain(c);
    }
    CHECK(retains[a] == 0);
    CHECK(retains[b] == 1);
    CHECK(releases[a] == 1);
    CHECK(releases[b] == 1);
    CHECK(retains[c] == 1);
    CHECK(releases[c] == 1);
}
