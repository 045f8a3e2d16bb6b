// layer/core/context_devices: the record of the devices each context was
// created with (PoCL reports a sub-device context as its parent), replaced
// when an address is reused and dropped when the context goes.
#include <catch2/catch_test_macros.hpp>

#include <vector>

#include "layer/core/context_devices.hpp"

using namespace cldmabuf;

namespace {
template <typename T>
T fake(unsigned long v) {
    return reinterpret_cast<T>(v);
}
}  // namespace

TEST_CASE("context devices: recorded as created, replaced, forgotten", "[context-devices]") {
    const cl_context ctx = fake<cl_context>(0x1000);
    const cl_device_id a = fake<cl_device_id>(0xa0), b = fake<cl_device_id>(0xb0), c = fake<cl_device_id>(0xc0);
    std::vector<cl_device_id> out;
    CHECK_FALSE(recorded_context_devices(ctx, &out));  // never seen: the ICD is asked

    const cl_device_id two[] = {a, b};
    remember_context_devices(ctx, two, 2);
    REQUIRE(recorded_context_devices(ctx, &out));
    CHECK(out == std::vector<cl_device_id>{a, b});

    // A new context at the freed address: its own devices, not the old ones.
    remember_context_devices(ctx, &c, 1);
    REQUIRE(recorded_context_devices(ctx, &out));
    CHECK(out == std::vector<cl_device_id>{c});

    forget_context_devices(ctx);
    CHECK_FALSE(recorded_context_devices(ctx, &out));
    forget_context_devices(ctx);  // twice: harmless
}

TEST_CASE("context devices: nothing recorded for no context or no devices", "[context-devices]") {
    const cl_device_id a = fake<cl_device_id>(0xa0);
    std::vector<cl_device_id> out;
    remember_context_devices(nullptr, &a, 1);
    CHECK_FALSE(recorded_context_devices(nullptr, &out));
    const cl_context ctx = fake<cl_context>(0x2000);
    remember_context_devices(ctx, nullptr, 1);
    remember_context_devices(ctx, &a, 0);
    CHECK_FALSE(recorded_context_devices(ctx, &out));
}
