#include "layer/i915/gen9_probe.hpp"

#include <drm.h>
#include <fcntl.h>
#include <i915_drm.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "layer/base/kernel_ops.hpp"
#include "layer/base/owned_fd.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf::i915 {
namespace {

struct IdRange {
    uint16_t id;
    const char *platform;
};

// Gen9 PCI device ids.  One group per platform, each transcribed from the
// macro of the same name in the kernel's include/drm/intel/i915_pciids.h
// (freebsd/drm-kmod @1ea9914e, which tracks upstream Linux):
//   SKL = INTEL_SKL_IDS (GT1, GT2, GT3, GT4), BXT = INTEL_BXT_IDS,
//   GLK = INTEL_GLK_IDS, KBL = INTEL_KBL_IDS (incl. INTEL_AML_KBL_GT2_IDS),
//   CFL = INTEL_CFL_IDS (incl. INTEL_AML_CFL_GT2_IDS), WHL = INTEL_WHL_IDS,
//   CML = INTEL_CML_IDS.  All of these map to graphics version 9 in
//   i915_pci.c.  CNL (Gen10) and later are deliberately absent.
constexpr IdRange kGen9Ids[] = {
    // INTEL_SKL_IDS
    {0x1906, "SKL"}, {0x1913, "SKL"}, {0x190E, "SKL"}, {0x1915, "SKL"}, {0x1902, "SKL"},
    {0x190A, "SKL"}, {0x190B, "SKL"}, {0x1917, "SKL"}, {0x1916, "SKL"}, {0x1921, "SKL"},
    {0x191E, "SKL"}, {0x1912, "SKL"}, {0x191A, "SKL"}, {0x191B, "SKL"}, {0x191D, "SKL"},
    {0x1923, "SKL"}, {0x1926, "SKL"}, {0x1927, "SKL"}, {0x192A, "SKL"}, {0x192B, "SKL"},
    {0x192D, "SKL"}, {0x1932, "SKL"}, {0x193A, "SKL"}, {0x193B, "SKL"}, {0x193D, "SKL"},
    // INTEL_BXT_IDS
    {0x0A84, "BXT"}, {0x1A84, "BXT"}, {0x1A85, "BXT"}, {0x5A84, "BXT"}, {0x5A85, "BXT"},
    // INTEL_GLK_IDS
    {0x3184, "GLK"}, {0x3185, "GLK"},
    // INTEL_KBL_IDS
    {0x5906, "KBL"}, {0x5913, "KBL"}, {0x590E, "KBL"}, {0x5915, "KBL"}, {0x5902, "KBL"},
    {0x5908, "KBL"}, {0x590A, "KBL"}, {0x590B, "KBL"}, {0x5916, "KBL"}, {0x5921, "KBL"},
    {0x591E, "KBL"}, {0x5912, "KBL"}, {0x5917, "KBL"}, {0x591A, "KBL"}, {0x591B, "KBL"},
    {0x591D, "KBL"}, {0x5926, "KBL"}, {0x5923, "KBL"}, {0x5927, "KBL"}, {0x593B, "KBL"},
    {0x591C, "KBL"}, {0x87C0, "KBL"},
    // INTEL_CFL_IDS
    {0x3E90, "CFL"}, {0x3E93, "CFL"}, {0x3E99, "CFL"}, {0x3E91, "CFL"}, {0x3E92, "CFL"},
    {0x3E96, "CFL"}, {0x3E98, "CFL"}, {0x3E9A, "CFL"}, {0x3E9C, "CFL"}, {0x3E94, "CFL"},
    {0x3E9B, "CFL"}, {0x3EA9, "CFL"}, {0x3EA5, "CFL"}, {0x3EA6, "CFL"}, {0x3EA7, "CFL"},
    {0x3EA8, "CFL"}, {0x87CA, "CFL"},
    // INTEL_WHL_IDS
    {0x3EA1, "WHL"}, {0x3EA4, "WHL"}, {0x3EA0, "WHL"}, {0x3EA3, "WHL"}, {0x3EA2, "WHL"},
    // INTEL_CML_IDS
    {0x9BA2, "CML"}, {0x9BA4, "CML"}, {0x9BA5, "CML"}, {0x9BA8, "CML"}, {0x9B21, "CML"},
    {0x9BAA, "CML"}, {0x9BAC, "CML"}, {0x9BC2, "CML"}, {0x9BC4, "CML"}, {0x9BC5, "CML"},
    {0x9BC6, "CML"}, {0x9BC8, "CML"}, {0x9BE6, "CML"}, {0x9BF6, "CML"}, {0x9B41, "CML"},
    {0x9BCA, "CML"}, {0x9BCC, "CML"},
};

int getparam(int fd, int param, int *value) {
    drm_i915_getparam gp{};
    gp.param = param;
    gp.value = value;
    return kernel_ioctl_retry(fd, DRM_IOCTL_I915_GETPARAM, &gp) == 0 ? 0 : -errno;
}

bool param_true(int fd, int param) {
    int v = 0;
    return getparam(fd, param, &v) == 0 && v > 0;
}

bool is_i915(int fd) {
    char name[16] = {};
    drm_version v{};
    v.name = name;
    v.name_len = sizeof(name) - 1;
    if (kernel_ioctl_retry(fd, DRM_IOCTL_VERSION, &v) != 0) return false;
    return v.name_len == 4 && std::memcmp(name, "i915", 4) == 0;
}

}  // namespace

const char *gen9_platform(uint16_t device_id) {
    for (const IdRange &r : kGen9Ids)
        if (r.id == device_id) return r.platform;
    return nullptr;
}

int probe_gen9_fd(int fd, Gen9Info *info) {
    if (!is_i915(fd)) return -ENODEV;
    int chipset = 0;
    if (getparam(fd, I915_PARAM_CHIPSET_ID, &chipset) != 0) return -ENODEV;
    const char *platform = gen9_platform(static_cast<uint16_t>(chipset));
    if (!platform) return -ENODEV;
    if (!param_true(fd, I915_PARAM_HAS_BLT) || !param_true(fd, I915_PARAM_HAS_EXEC_SOFTPIN) ||
        !param_true(fd, I915_PARAM_HAS_EXEC_FENCE) ||
        !param_true(fd, I915_PARAM_HAS_EXEC_BATCH_FIRST))
        return -ENODEV;
    info->vendor_id = 0x8086;
    info->device_id = static_cast<uint16_t>(chipset);
    info->platform = platform;
    info->has_llc = param_true(fd, I915_PARAM_HAS_LLC);
    return 0;
}

int probe_gen9(Gen9Info *info) {
    std::vector<std::string> paths;
    if (const char *forced = setting("CLDMABUF_BLT_NODE"); forced && *forced) {
        paths.emplace_back(forced);
    } else {
        std::vector<std::string> names = kernel().list_dir("/dev/dri");
        std::sort(names.begin(), names.end());
        for (const std::string &n : names)
            if (n.rfind("renderD", 0) == 0) paths.push_back("/dev/dri/" + n);
    }
    for (const std::string &path : paths) {
        OwnedFd fd(kernel().open(path.c_str(), O_RDWR | O_CLOEXEC));
        if (!fd) continue;
        Gen9Info found;
        if (probe_gen9_fd(fd.get(), &found) == 0) {
            found.fd = fd.release();  // the caller's now
            found.path = path;
            found.has_pci = drm_node_pci_address(path, &found.pci);
            *info = found;
            return 0;
        }
    }
    return -ENODEV;
}

}  // namespace cldmabuf::i915
