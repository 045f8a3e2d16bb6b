// blt_device_mismatch's cache (layer/blit/device_pairing.hpp) against a fake ICD
// (a dispatch table whose clGetDeviceInfo answers from a table), with the
// blitter on the virtual Gen9 (node at 0000:00:02.0).  A sub-device's handle
// can be released and its address handed to another device: the cache is
// keyed by the root device, so the second device gets its own answer.
#include <catch2/catch_test_macros.hpp>

#include <cstring>
#include <map>

#include "layer/core/dispatch.hpp"
#include "layer/blit/device_pairing.hpp"
#include "layer/i915/blt_engine.hpp"

using namespace cldmabuf;

namespace {

struct FakeDevice {
    cl_device_id parent = nullptr;
    cl_device_type type = CL_DEVICE_TYPE_GPU;
    cl_uint vendor = 0x8086;
    cl_device_pci_bus_info_khr pci{};
};

std::map<cl_device_id, FakeDevice> devices;

template <typename T>
cl_int give(const T &v, size_t size, void *value, size_t *size_ret) {
    if (size_ret) *size_ret = sizeof v;
    if (value) {
        if (size < sizeof v) return CL_INVALID_VALUE;
        std::memcpy(value, &v, sizeof v);
    }
    return CL_SUCCESS;
}

cl_int CL_API_CALL fake_device_info(cl_device_id d, cl_device_info name, size_t size, void *value, size_t *ret) {
    auto it = devices.find(d);
    if (it == devices.end()) return CL_INVALID_DEVICE;
    switch (name) {
    case CL_DEVICE_PARENT_DEVICE: return give(it->second.parent, size, value, ret);
    case CL_DEVICE_TYPE: return give(it->second.type, size, value, ret);
    case CL_DEVICE_VENDOR_ID: return give(it->second.vendor, size, value, ret);
    case CL_DEVICE_PCI_BUS_INFO_KHR: return give(it->second.pci, size, value, ret);
    default: return CL_INVALID_VALUE;
    }
}

cl_device_id handle(int i) { return reinterpret_cast<cl_device_id>(static_cast<uintptr_t>(0x1000 + 16 * i)); }

}  // namespace

TEST_CASE("blitter device cache: a sub-device handle reused by another GPU's sub-device gets its own answer",
          "[devcache]") {
    if (!i915::BltEngine::instance()) SKIP("needs the virtual Gen9 (LD_PRELOAD=libvgen9.so)");
    static cl_icd_dispatch fake{};
    fake.clGetDeviceInfo = fake_device_info;
    init_dispatch(&fake, sizeof fake / sizeof(void *));

    const cl_device_id igpu = handle(1), dgpu = handle(2), sub = handle(3);
    devices[igpu].pci = {0, 0, 2, 0};  // the blitter's node
    devices[dgpu].pci = {0, 3, 0, 0};  // another GPU
    devices[sub].parent = igpu;
    devices[sub].pci = devices[igpu].pci;
    CHECK(blt_device_mismatch(sub) == nullptr);

    // The sub-device is released and its address reused for a sub-device of
    // the other GPU: a cache keyed by the handle would still say "matches".
    devices[sub].parent = dgpu;
    devices[sub].pci = devices[dgpu].pci;
    const char *why = blt_device_mismatch(sub);
    REQUIRE(why != nullptr);
    CHECK(std::strstr(why, "0000:03:00.0") != nullptr);
    CHECK(blt_device_mismatch(dgpu) == why);  // the root's cached answer
    CHECK(blt_device_mismatch(igpu) == nullptr);
}
