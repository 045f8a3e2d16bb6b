// dmabuf-probe: prove that the real-kernel lane works.
//
// For every dma-buf source (dma-heap, udmabuf, vgem): report availability,
// allocate, check the kernel size, mmap + write + unmap, remap + read back,
// with DMA_BUF_IOCTL_SYNC brackets.  Then one vgem fence cycle: attach a
// write fence, poll(timeout 0) must say busy, signal, poll must say ready;
// and the same for a read (shared) fence, which blocks POLLOUT only.
//
// Usage: dmabuf-probe [--allow-missing]
//   default: every source must be available (the VM lane); exit 1 otherwise.
//   --allow-missing: skip absent sources; exit 77 if none was available.
// Exit: 0 all good, 1 any failure.
#include "dmabuf_source.hpp"

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include <poll.h>
#include <unistd.h>
#include <linux/ioctl.h>  // _IOWR behind the DMA_BUF_IOCTL_* numbers (issue #29)
#include <linux/dma-buf.h>

namespace t = cldmabuf::test;

namespace {

int failures = 0;

void check(bool ok, const char* kind, const std::string& what) {
    std::printf("  [%s] %-4s %s\n", kind, ok ? "ok" : "FAIL", what.c_str());
    if (!ok) ++failures;
}

void probe_rw(t::DmabufKind kind) {
    const char* kn = t::kind_name(kind);
    constexpr std::size_t kSize = 1u << 20;  // 1 MiB
    t::Dmabuf buf = t::allocate(kind, kSize);
    check(buf.fd >= 0, kn, "allocate 1 MiB -> fd " + std::to_string(buf.fd));
    std::size_t ksz = t::kernel_size(buf.fd);
    check(ksz >= kSize, kn, "lseek(SEEK_END) = " + std::to_string(ksz));

    auto* p = static_cast<unsigned char*>(t::map(buf));
    t::sync(buf.fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
    for (std::size_t i = 0; i < kSize; ++i) p[i] = static_cast<unsigned char>((i * 131u + 7u) & 0xffu);
    t::sync(buf.fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
    t::unmap(p, buf.size);

    p = static_cast<unsigned char*>(t::map(buf));
    t::sync(buf.fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < kSize; ++i)
        if (p[i] != static_cast<unsigned char>((i * 131u + 7u) & 0xffu)) ++bad;
    t::sync(buf.fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
    t::unmap(p, buf.size);
    check(bad == 0, kn, "mmap write, remap, read back (" + std::to_string(bad) + " bad bytes)");

    // A second fd (as an importer would get) sees the same bytes.
    int d = buf.dup_fd();
    check(d >= 0, kn, "dup_fd");
    ::close(d);
}

void probe_vgem_fences() {
    const char* kn = "vgem-fence";
    t::Dmabuf buf = t::allocate(t::DmabufKind::vgem, 4096);
    check(t::poll_ready(buf.fd, POLLIN, 0) && t::poll_ready(buf.fd, POLLOUT, 0), kn,
          "fresh BO: POLLIN and POLLOUT ready");

    std::uint32_t f = t::attach_fence(buf, /*write=*/true);
    check(true, kn, "attach write fence id " + std::to_string(f));
    check(!t::poll_ready(buf.fd, POLLIN, 0), kn, "write fence: poll(POLLIN, 0) busy");
    check(!t::poll_ready(buf.fd, POLLOUT, 0), kn, "write fence: poll(POLLOUT, 0) busy");
    t::signal_fence(buf, f);
    check(t::poll_ready(buf.fd, POLLIN, 0), kn, "signalled: poll(POLLIN, 0) ready");
    check(t::poll_ready(buf.fd, POLLOUT, 0), kn, "signalled: poll(POLLOUT, 0) ready");

    std::uint32_t r = t::attach_fence(buf, /*write=*/false);
    check(true, kn, "attach read fence id " + std::to_string(r));
    check(t::poll_ready(buf.fd, POLLIN, 0), kn, "read fence: poll(POLLIN, 0) ready");
    check(!t::poll_ready(buf.fd, POLLOUT, 0), kn, "read fence: poll(POLLOUT, 0) busy");
    t::signal_fence(buf, r);
    check(t::poll_ready(buf.fd, POLLOUT, 100), kn, "signalled: poll(POLLOUT) ready");
}

}  // namespace

int main(int argc, char** argv) {
    bool allow_missing = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--allow-missing") == 0) {
            allow_missing = true;
        } else {
            std::fprintf(stderr, "usage: %s [--allow-missing]\n", argv[0]);
            return 2;
        }
    }
    int tested = 0;
    for (auto kind : t::all_kinds()) {
        const char* kn = t::kind_name(kind);
        bool av = t::available(kind);
        std::printf("%s: %s%s\n", kn, av ? "available" : "not available",
                    kind == t::DmabufKind::vgem && av ? (" (" + t::vgem_device_path() + ")").c_str() : "");
        if (!av) {
            if (!allow_missing) ++failures;
            continue;
        }
        ++tested;
        try {
            probe_rw(kind);
            if (kind == t::DmabufKind::vgem) probe_vgem_fences();
        } catch (const std::exception& e) {
            std::printf("  [%s] FAIL exception: %s\n", kn, e.what());
            ++failures;
        }
    }
    if (failures) {
        std::printf("dmabuf-probe: FAILED (%d)\n", failures);
        return 1;
    }
    if (tested == 0) {
        std::printf("dmabuf-probe: no dma-buf source available (skipped)\n");
        return 77;
    }
    std::printf("dmabuf-probe: all %d sources OK\n", tested);
    return 0;
}
