// Pairing an OpenCL device with the Gen9 node (layer/blit/device_pairing.hpp,
// device_mismatch): the probe records the node's PCI address through the
// kernel seam (fake sysfs here), a GPU device matches only its own PCI
// function when cl_khr_pci_bus_info answers, by vendor otherwise; a CPU
// device always matches.
#include <catch2/catch_test_macros.hpp>

#include "fake_i915.hpp"
#include "layer/blit/device_pairing.hpp"
#include "layer/i915/gen9_probe.hpp"

using namespace cldmabuf;
using namespace cldmabuf::i915;
using fake::FakeI915;
using fake::ScopedKernel;

namespace {

Gen9Info probe(FakeI915 &k) {
    Gen9Info info;
    REQUIRE(probe_gen9(&info) == 0);
    k.close(info.fd);
    return info;
}

DeviceFacts gpu(cl_uint vendor, const char *pci = nullptr) {
    DeviceFacts f;
    f.type = CL_DEVICE_TYPE_GPU;
    f.vendor_id = vendor;
    if (pci) {
        REQUIRE(parse_pci_address(pci, &f.pci));
        f.has_pci = true;
    }
    return f;
}

}  // namespace

TEST_CASE("probe: the node's PCI address comes from its sysfs link through the seam", "[i915][pci]") {
    FakeI915 k;
    ScopedKernel sk(&k);
    k.dri = {"card0", "renderD129"};
    k.pci_path = "/sys/devices/pci0000:00/0000:00:1c.4/0000:03:00.0";
    const Gen9Info info = probe(k);
    REQUIRE(info.has_pci);
    CHECK(pci_text(info.pci) == "0000:03:00.0");
    // The link of the node's own major:minor was asked, nothing else.
    REQUIRE(k.real_paths.size() == 1);
    CHECK(k.real_paths[0] == "/sys/dev/char/226:129/device");

    k.pci_path = "/sys/devices/platform/vgem";  // not a PCI function
    CHECK_FALSE(probe(k).has_pci);
    k.pci_path.clear();  // no sysfs entry at all
    CHECK_FALSE(probe(k).has_pci);
    CHECK(k.node_opens == k.node_closes);
}

TEST_CASE("device match: a GPU with cl_khr_pci_bus_info must be the node's PCI function", "[i915][pci]") {
    FakeI915 k;
    ScopedKernel sk(&k);
    const Gen9Info node = probe(k);  // 0000:00:02.0
    REQUIRE(node.has_pci);
    CHECK(device_mismatch(gpu(0x8086, "0000:00:02.0"), node).empty());
    // Another function, bus or domain: refused, the reason names both.
    for (const char *other : {"0000:00:02.1", "0000:01:00.0", "0001:00:02.0"}) {
        const std::string why = device_mismatch(gpu(0x8086, other), node);
        INFO(why);
        CHECK(why.find(other) != std::string::npos);
        CHECK(why.find("0000:00:02.0") != std::string::npos);
        CHECK(why.find("/dev/dri/renderD128") != std::string::npos);
    }
    // The address decides, not the vendor: an Intel dGPU elsewhere is refused ...
    CHECK_FALSE(device_mismatch(gpu(0x8086, "0000:03:00.0"), node).empty());
    // ... and a device at the node's address is the node whatever vendor id its ICD reports.
    CHECK(device_mismatch(gpu(0x1002, "0000:00:02.0"), node).empty());
}

TEST_CASE("device match: without PCI info on one side", "[i915][pci]") {
    FakeI915 k;
    ScopedKernel sk(&k);
    const Gen9Info node = probe(k);
    // No cl_khr_pci_bus_info: vendor 0x8086 matches, any other vendor does not.
    CHECK(device_mismatch(gpu(0x8086), node).empty());
    const std::string amd = device_mismatch(gpu(0x1002), node);
    CHECK(amd.find("0x1002") != std::string::npos);
    CHECK(amd.find("0000:00:02.0") != std::string::npos);
    // The node's address unknown: a device that names its address cannot be
    // proven to be the node, so it is refused; one without falls back to the vendor.
    k.pci_path.clear();
    const Gen9Info blind = probe(k);
    REQUIRE_FALSE(blind.has_pci);
    const std::string why = device_mismatch(gpu(0x8086, "0000:00:02.0"), blind);
    CHECK(why.find("unknown") != std::string::npos);
    CHECK(device_mismatch(gpu(0x8086), blind).empty());
}

TEST_CASE("device match: a CPU device always matches, an accelerator never", "[i915][pci]") {
    FakeI915 k;
    ScopedKernel sk(&k);
    const Gen9Info node = probe(k);
    DeviceFacts cpu;
    cpu.type = CL_DEVICE_TYPE_CPU;
    cpu.vendor_id = 0x1022;
    CHECK(device_mismatch(cpu, node).empty());
    cpu.has_pci = true;  // even one that names some address
    REQUIRE(parse_pci_address("0000:05:00.0", &cpu.pci));
    CHECK(device_mismatch(cpu, node).empty());
    DeviceFacts acc;
    acc.type = CL_DEVICE_TYPE_ACCELERATOR;
    acc.vendor_id = 0x8086;
    CHECK_FALSE(device_mismatch(acc, node).empty());
}
