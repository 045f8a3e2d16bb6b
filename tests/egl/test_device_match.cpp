// layer/egl's device pairing rule (docs/egl.md, "GPU match"), without EGL or OpenCL.
#include <catch2/catch_test_macros.hpp>

#include "layer/egl/device_match.hpp"

using namespace cldmabuf;

namespace {
DisplayDevice software() {
    DisplayDevice d;
    d.software = true;
    return d;
}
DisplayDevice gpu(bool with_pci, PciAddress pci = {0, 0, 2, 0}) {
    DisplayDevice d;
    d.drm_node = "/dev/dri/renderD128";
    d.has_pci = with_pci;
    d.pci = pci;
    return d;
}
ClDeviceFacts device(cl_device_type type, bool with_pci = false, PciAddress pci = {}) {
    ClDeviceFacts f;
    f.type = type;
    f.has_pci = with_pci;
    f.pci = pci;
    return f;
}
}  // namespace

TEST_CASE("a software EGL display pairs only with CPU devices", "[device-match]") {
    std::string why;
    CHECK(match_device(software(), device(CL_DEVICE_TYPE_CPU), &why) == Match::yes);
    CHECK(match_device(software(), device(CL_DEVICE_TYPE_GPU, true, {0, 0, 2, 0}), &why) == Match::no);
    CHECK(why.find("software") != std::string::npos);
    CHECK(match_device(software(), device(CL_DEVICE_TYPE_ACCELERATOR), &why) == Match::no);
    // No DRM node at all (no EGL_EXT_device_query) counts as software.
    DisplayDevice unknown;
    CHECK(match_device(unknown, device(CL_DEVICE_TYPE_CPU), &why) == Match::yes);
    CHECK(match_device(unknown, device(CL_DEVICE_TYPE_GPU), &why) == Match::no);
}

TEST_CASE("a GPU EGL display pairs with the OpenCL device on the same PCI function", "[device-match]") {
    std::string why;
    CHECK(match_device(gpu(true), device(CL_DEVICE_TYPE_GPU, true, {0, 0, 2, 0}), &why) == Match::yes);
    CHECK(match_device(gpu(true), device(CL_DEVICE_TYPE_GPU, true, {0, 3, 0, 0}), &why) == Match::no);
    CHECK(why.find("0000:03:00.0") != std::string::npos);
    CHECK(why.find("0000:00:02.0") != std::string::npos);
    CHECK(match_device(gpu(true), device(CL_DEVICE_TYPE_CPU), &why) == Match::no);
    // Not provable either way: allowed with a warning.
    CHECK(match_device(gpu(true), device(CL_DEVICE_TYPE_GPU), &why) == Match::unverified);
    CHECK(match_device(gpu(false), device(CL_DEVICE_TYPE_GPU, true, {0, 0, 2, 0}), &why) == Match::unverified);
}

TEST_CASE("PCI addresses parse as sysfs writes them", "[device-match]") {
    PciAddress a;
    REQUIRE(parse_pci_address("0000:00:02.0", &a));
    CHECK(a == PciAddress{0, 0, 2, 0});
    REQUIRE(parse_pci_address("0001:c3:1f.7", &a));
    CHECK(a == PciAddress{1, 0xc3, 0x1f, 7});
    CHECK_FALSE(parse_pci_address("card0", &a));
    CHECK_FALSE(parse_pci_address("0000:00:02.0x", &a));
    CHECK_FALSE(parse_pci_address("0000:00:20.0", &a));  // device > 31
    CHECK_FALSE(drm_node_pci_address("/nonexistent", &a));
}
