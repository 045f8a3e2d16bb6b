// layer/egl's device pairing rule (docs/egl.md, "GPU match"), without EGL or OpenCL.
#include <catch2/catch_test_macros.hpp>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "layer/egl/device_pairing_rule.hpp"
#include "../unit/fake_kernel.hpp"

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

// The display's node is resolved to a PCI address through the kernel seam
// (stat + sysfs link), then matched: the refusal names both devices.
namespace {
struct SysfsKernel : unit::FakeKernel {
    std::string device_link;  // what /sys/dev/char/226:128/device resolves to
    int stat(const char *path, struct stat *st) override {
        if (std::string(path) != "/dev/dri/renderD128") return unit::FakeKernel::stat(path, st);
        *st = {};
        st->st_mode = S_IFCHR | 0666;
        st->st_rdev = makedev(226, 128);
        return 0;
    }
    std::string real_path(const char *path) override {
        if (std::string(path) != "/sys/dev/char/226:128/device") return unit::FakeKernel::real_path(path);
        return device_link;
    }
};
DisplayDevice hardware_display(const char *driver) {
    DisplayDevice d;
    d.driver = driver;
    d.drm_node = "/dev/dri/renderD128";
    resolve_display_device(&d);
    return d;
}
}  // namespace

TEST_CASE("a GPU on another PCI function is refused, naming both devices", "[device-match]") {
    SysfsKernel k;
    k.device_link = "/sys/devices/pci0000:00/0000:00:02.0";
    unit::ScopedKernel scoped(&k);
    const DisplayDevice display = hardware_display("iris");
    REQUIRE_FALSE(display.software);
    REQUIRE(display.has_pci);
    CHECK(display.pci == PciAddress{0, 0, 2, 0});

    std::string why;
    CHECK(match_device(display, device(CL_DEVICE_TYPE_GPU, true, {0, 3, 0, 0}), &why) == Match::no);
    CHECK(why.find("/dev/dri/renderD128") != std::string::npos);
    CHECK(why.find("0000:00:02.0") != std::string::npos);
    CHECK(why.find("0000:03:00.0") != std::string::npos);
    why.clear();
    CHECK(match_device(display, device(CL_DEVICE_TYPE_GPU, true, {0, 0, 2, 0}), &why) == Match::yes);
}

TEST_CASE("a DRM node the seam cannot resolve leaves the pairing unverified", "[device-match]") {
    SysfsKernel k;
    k.device_link = "/sys/devices/platform/vgem";  // not a PCI function
    unit::ScopedKernel scoped(&k);
    const DisplayDevice display = hardware_display("iris");
    CHECK_FALSE(display.has_pci);
    std::string why;
    CHECK(match_device(display, device(CL_DEVICE_TYPE_GPU, true, {0, 3, 0, 0}), &why) == Match::unverified);
    CHECK(why.find("/dev/dri/renderD128 has no PCI address") != std::string::npos);
}

TEST_CASE("a software driver on a DRM node is software and is not resolved", "[device-match]") {
    SysfsKernel k;
    k.device_link = "/sys/devices/pci0000:00/0000:00:02.0";
    unit::ScopedKernel scoped(&k);
    const DisplayDevice display = hardware_display("kms_swrast");
    CHECK(display.software);
    CHECK_FALSE(display.has_pci);
    std::string why;
    CHECK(match_device(display, device(CL_DEVICE_TYPE_GPU, true, {0, 0, 2, 0}), &why) == Match::no);
    CHECK(match_device(display, device(CL_DEVICE_TYPE_CPU), &why) == Match::yes);
}
