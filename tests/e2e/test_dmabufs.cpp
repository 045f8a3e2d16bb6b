#include "test_dmabufs.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <drm.h>
#include <i915_drm.h>

namespace e2e {
namespace {

using cldmabuf::test::DmabufKind;

// The virtual Gen9's node when libvgen9.so is preloaded.
int sim_device() {
    static int fd = [] {
        int f = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
        if (f < 0) return -1;
        char name[16] = {};
        drm_version v{};
        v.name = name;
        v.name_len = sizeof name - 1;
        if (ioctl(f, DRM_IOCTL_VERSION, &v) != 0 || std::strcmp(name, "i915") != 0) {
            close(f);
            return -1;
        }
        return f;
    }();
    return fd;
}

std::string pick() {
    const char *want = std::getenv("CLDMABUF_TEST_DMABUF");
    std::string w = want ? want : "";
    if (w == "heap" || (w.empty() && cldmabuf::test::available(DmabufKind::dma_heap))) return "heap";
    if (w == "udmabuf" || (w.empty() && cldmabuf::test::available(DmabufKind::udmabuf))) return "udmabuf";
    if (w == "vgem" || (w.empty() && cldmabuf::test::available(DmabufKind::vgem))) return "vgem";
    if (w == "sim" || (w.empty() && sim_device() >= 0)) return "sim";
    return "";
}

Dmabuf make_sim(size_t size) {
    int dev = sim_device();
    if (dev < 0) throw std::runtime_error("virtual Gen9 not loaded");
    drm_i915_gem_create create{};
    create.size = (size + 4095) & ~size_t{4095};
    if (ioctl(dev, DRM_IOCTL_I915_GEM_CREATE, &create) != 0) throw std::runtime_error("GEM_CREATE failed");
    drm_prime_handle prime{};
    prime.handle = create.handle;
    prime.flags = DRM_CLOEXEC | DRM_RDWR;
    int rc = ioctl(dev, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime);
    drm_gem_close close_arg{};
    close_arg.handle = create.handle;
    ioctl(dev, DRM_IOCTL_GEM_CLOSE, &close_arg);  // the dma-buf keeps the object alive
    if (rc != 0) throw std::runtime_error("PRIME_HANDLE_TO_FD failed");
    Dmabuf buf;
    buf.fd = prime.fd;
    buf.size = create.size;
    buf.kind = DmabufKind::dma_heap;  // closes like a heap buffer: just the fd
    return buf;
}

}  // namespace

const std::string &dmabuf_source() {
    static const std::string source = pick();
    return source;
}

bool have_dmabuf() { return !dmabuf_source().empty(); }
bool source_has_fences() { return dmabuf_source() == "vgem"; }

Dmabuf make_dmabuf(size_t size) {
    const std::string &s = dmabuf_source();
    if (s == "heap") return cldmabuf::test::allocate(DmabufKind::dma_heap, size);
    if (s == "udmabuf") return cldmabuf::test::allocate(DmabufKind::udmabuf, size);
    if (s == "vgem") return cldmabuf::test::allocate(DmabufKind::vgem, size);
    if (s == "sim") return make_sim(size);
    throw std::runtime_error("no dma-buf source");
}

}  // namespace e2e
