// The counting trampolines for the ICD's enqueues handed out by name
// (layer/queue/looked_up.hpp), called without an ICD: each call moves
// the enqueue epoch once and reaches the target with every argument, the
// stack ones past the sixth included, and its answer comes back.
#include <catch2/catch_test_macros.hpp>

#include <cstdint>

#include "layer/queue/looked_up.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/core/registry.hpp"

using namespace cldmabuf;

namespace {

int calls = 0;
uint64_t in_flight_seen = 0;
// Nine arguments, as clEnqueueNDRangeKernel has: three on the stack.
int64_t nine(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g, int64_t h,
                         int64_t i) {
    ++calls;
    in_flight_seen = read_epoch().in_flight();
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i;
}
double floats(double x, float y, int z) { return x * y + z; }

}  // namespace

TEST_CASE("a counting trampoline counts once and forwards every argument and the answer", "[trampoline]") {
    if (counted_extension_capacity() == 0) SKIP("no trampolines in this build (not x86-64)");
    auto *f = reinterpret_cast<decltype(&nine)>(counted_extension("clEnqueueNineKHR", reinterpret_cast<void *>(&nine)));
    REQUIRE(f != nullptr);
    CHECK(reinterpret_cast<void *>(f) != reinterpret_cast<void *>(&nine));
    const uint64_t before = read_epoch().epoch();
    CHECK(f(1, 2, 3, 4, 5, 6, 7, 8, 9) == 1 + 4 + 9 + 16 + 25 + 36 + 49 + 64 + 81);
    CHECK(f(9, 8, 7, 6, 5, 4, 3, 2, 1) == 9 + 16 + 21 + 24 + 25 + 24 + 21 + 16 + 9);
    CHECK(read_epoch().epoch() == before + 2);
    CHECK(calls == 2);
    // Floating-point registers pass through as well.
    auto *g = reinterpret_cast<decltype(&floats)>(counted_extension("clEnqueueFloatsKHR", reinterpret_cast<void *>(&floats)));
    REQUIRE(g != nullptr);
    CHECK(g(1.5, 2.0f, 3) == 6.0);
    CHECK(read_epoch().epoch() == before + 3);
    // The same function again, under any name: the same trampoline.
    CHECK(counted_extension("clEnqueueOtherNameKHR", reinterpret_cast<void *>(&nine)) == reinterpret_cast<void *>(f));
    CHECK(counted_extension("clEnqueueNullKHR", nullptr) == nullptr);
}

// Fourteen arguments, eight on the stack; and a target that needs its stack
// aligned (an SSE spill of a 16-byte value).
int64_t fourteen(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g, int64_t h, int64_t i,
                 int64_t j, int64_t k, int64_t l, int64_t m, int64_t n) {
    in_flight_seen = read_epoch().in_flight();
    alignas(16) volatile __int128 aligned = n;
    return a + b + c + d + e + f + g + h + i + j + k + l + m + static_cast<int64_t>(aligned) * 1000;
}

// Issue #28 item 1: with an import alive the command is in flight until the
// ICD's function returned, so another thread's clFinish cannot take the
// queue for quiet before the command is in it.
TEST_CASE("with an import alive a trampoline keeps the command in flight until the target returned", "[trampoline]") {
    if (counted_extension_capacity() == 0) SKIP("no trampolines in this build (not x86-64)");
    auto *f = reinterpret_cast<decltype(&nine)>(counted_extension("clEnqueueNineKHR", reinterpret_cast<void *>(&nine)));
    auto *g = reinterpret_cast<decltype(&fourteen)>(
        counted_extension("clEnqueueFourteenKHR", reinterpret_cast<void *>(&fourteen)));
    REQUIRE(f != nullptr);
    REQUIRE(g != nullptr);
    auto import = std::make_shared<Import>();
    import->mem = reinterpret_cast<cl_mem>(uintptr_t{0x7d000000});
    imports().add(import);
    const EpochWord before = read_epoch();
    CHECK(f(1, 2, 3, 4, 5, 6, 7, 8, 9) == 1 + 4 + 9 + 16 + 25 + 36 + 49 + 64 + 81);
    CHECK(in_flight_seen == before.in_flight() + 1);
    CHECK(read_epoch().raw == before.raw + kEpochOne);
    CHECK(g(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14) == 91 + 14000);
    CHECK(in_flight_seen == before.in_flight() + 1);
    CHECK(read_epoch().raw == before.raw + 2 * kEpochOne);
    imports().remove(import->mem);
    // No import: landed before the jump.
    CHECK(g(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14) == 91 + 14000);
    CHECK(in_flight_seen == before.in_flight());
}

TEST_CASE("the trampoline pool is bounded: past it, nothing (the caller hands out the ICD's function)", "[trampoline]") {
    const int capacity = counted_extension_capacity();
    int handed = 0;
    for (uintptr_t i = 1; i <= uintptr_t(capacity) + 4; ++i)
        handed += counted_extension("clEnqueueManyKHR", reinterpret_cast<void *>(0x7f0000 + 16 * i)) != nullptr;
    // Two went to the case above where it ran first (Catch2 runs them in order).
    CHECK(handed <= capacity);
    CHECK(counted_extension("clEnqueueOneMoreKHR", reinterpret_cast<void *>(0x7e0000)) == nullptr);
}
