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
#ifdef __SIZEOF_INT128__
    alignas(16) volatile __int128 aligned = n;
    const int64_t back = static_cast<int64_t>(aligned);
#else  // no 128-bit integer on 32-bit targets: a 16-byte-aligned local all the same
    alignas(16) volatile int64_t aligned[2] = {n, 0};
    const int64_t back = aligned[0];
#endif
    return a + b + c + d + e + f + g + h + i + j + k + l + m + back * 1000;
}

// Issue #28 item 1: with an import alive the command is in flight until the
// ICD's function returned, so another thread's clFinish cannot take the
// queue for quiet before the command is in it.
TEST_CASE("with an import alive a trampoline keeps the command in flight until the target returned", "[trampoline]") {
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

// Every build has the pool, so a looked-up enqueue never turns the word's
// users off below its size.
TEST_CASE("every build has the trampoline pool", "[trampoline]") { CHECK(counted_extension_capacity() == 256); }

// The trampolines forward 22 arguments of up to 64 bits: far more than any
// clEnqueue* takes (clEnqueueNativeKernel: 10).
int64_t twenty(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g, int64_t h, int64_t i,
               int64_t j, int64_t k, int64_t l, int64_t m, int64_t n, int64_t o, int64_t p, int64_t q, int64_t r,
               int64_t s, int64_t t) {
    return a + b + c + d + e + f + g + h + i + j + k + l + m + n + o + p + q + r + s + 1000 * t;
}
// A 32-bit target passes a 64-bit value in a register pair or 8-byte stack
// slot, aligned: the words before it must land where they came.
int64_t mixed(int32_t a, int64_t b, int32_t c, int64_t d, int32_t e, int64_t f) {
    return a + 10 * b + 100 * c + 1000 * d + 10000 * e + 100000 * f;
}
uint64_t wide_answer() { return 0x1234567887654321ull; }

TEST_CASE("a counting trampoline forwards 20 arguments, mixed widths and a 64-bit answer", "[trampoline]") {
    auto *f = reinterpret_cast<decltype(&twenty)>(counted_extension("clEnqueueTwentyKHR", reinterpret_cast<void *>(&twenty)));
    auto *g = reinterpret_cast<decltype(&mixed)>(counted_extension("clEnqueueMixedKHR", reinterpret_cast<void *>(&mixed)));
    auto *h = reinterpret_cast<decltype(&wide_answer)>(
        counted_extension("clEnqueueWideKHR", reinterpret_cast<void *>(&wide_answer)));
    REQUIRE(f != nullptr);
    REQUIRE(g != nullptr);
    REQUIRE(h != nullptr);
    const uint64_t before = read_epoch().epoch();
    CHECK(f(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20) == 190 + 20000);
    CHECK(g(1, 2, 3, 4, 5, 6) == 1 + 20 + 300 + 4000 + 50000 + 600000);
    CHECK(h() == 0x1234567887654321ull);
    CHECK(read_epoch().epoch() == before + 3);
}

TEST_CASE("the trampoline pool is bounded: past it, nothing (the caller hands out the ICD's function)", "[trampoline]") {
    const int capacity = counted_extension_capacity();
    int handed = 0;
    for (uintptr_t i = 1; i <= uintptr_t(capacity) + 4; ++i)
        handed += counted_extension("clEnqueueManyKHR", reinterpret_cast<void *>(0x7f0000 + 16 * i)) != nullptr;
    // Some went to the cases above, which ran first (Catch2 runs them in order).
    CHECK(handed <= capacity);
    CHECK(counted_extension("clEnqueueOneMoreKHR", reinterpret_cast<void *>(0x7e0000)) == nullptr);
}
