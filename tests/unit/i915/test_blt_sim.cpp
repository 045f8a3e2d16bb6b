// BltEngine end to end on the virtual Gen9 (tests/sim, libvgen9.so loaded with
// LD_PRELOAD): real dma-bufs exported by the sim node, real batches parsed and
// executed by the sim's BCS model, real sync_file fences.  Everything here is
// "on the virtual Gen9"; nothing is claimed for hardware.
//
// The sim control API is reached through dlsym (tests/support/vgen9_control.hpp) so the binary
// does not link libvgen9; without the preload every test is skipped.
#include <catch2/catch_test_macros.hpp>

#include <drm.h>
#include <fcntl.h>
#include <i915_drm.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <cstring>
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "vgen9_control.hpp"
#include "layer/blit/device_pairing.hpp"
#include "layer/i915/blt_engine.hpp"
#include "layer/core/pci_address.hpp"
#include "layer/base/kernel_ops.hpp"

using namespace cldmabuf::i915;
using cldmabuf::kernel;

namespace {

using cldmabuf::test::vgen9;

#define REQUIRE_SIM() \
    do { if (!vgen9().loaded) SKIP("libvgen9.so not preloaded"); } while (0)

// A native sim object exported as a dma-buf, CPU-mapped through the sim node.
struct SimBuffer {
    int node = -1;
    uint32_t handle = 0;
    int dmabuf = -1;
    uint8_t *map = nullptr;
    size_t size = 0;

    SimBuffer(int node_fd, size_t sz) : node(node_fd), size(sz) {
        drm_i915_gem_create c{};
        c.size = sz;
        REQUIRE(cldmabuf::kernel_ioctl_retry(node, DRM_IOCTL_I915_GEM_CREATE, &c) == 0);
        handle = c.handle;
        size = c.size;
        drm_i915_gem_mmap_offset mo{};
        mo.handle = handle;
        mo.flags = I915_MMAP_OFFSET_WB;
        REQUIRE(cldmabuf::kernel_ioctl_retry(node, DRM_IOCTL_I915_GEM_MMAP_OFFSET, &mo) == 0);
        void *p = kernel().mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, node, off_t(mo.offset));
        REQUIRE(p != MAP_FAILED);
        map = static_cast<uint8_t *>(p);
        drm_prime_handle ph{};
        ph.handle = handle;
        ph.flags = DRM_CLOEXEC | DRM_RDWR;
        REQUIRE(cldmabuf::kernel_ioctl_retry(node, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph) == 0);
        dmabuf = ph.fd;
    }
    ~SimBuffer() {
        kernel().munmap(map, size);
        kernel().close(dmabuf);
        drm_gem_close gc{};
        gc.handle = handle;
        cldmabuf::kernel_ioctl_retry(node, DRM_IOCTL_GEM_CLOSE, &gc);
    }
};

void fill(uint8_t *p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; ++i) { seed = seed * 1664525u + 1013904223u; p[i] = uint8_t(seed >> 24); }
}

uint64_t y_tiled(uint64_t pitch, uint64_t xb, uint64_t y) {  // reference notes section 6
    return ((y / 32) * (pitch / 128) + xb / 128) * 4096 + ((xb % 128) / 16) * 512 + (y % 32) * 16 + xb % 16;
}

uint64_t x_tiled(uint64_t pitch, uint64_t xb, uint64_t y) {
    return ((y / 8) * (pitch / 512) + xb / 512) * 4096 + (y % 8) * 512 + xb % 512;
}

struct Fixture {
    struct vgen9_stats before{};
    int node = -1;
    std::unique_ptr<BltEngine> eng;
    Fixture() {
        vgen9().reset();
        vgen9().stats(&before);
        node = kernel().open(vgen9().node_path(), O_RDWR | O_CLOEXEC);
        REQUIRE(node >= 0);
        int err = 0;
        eng = BltEngine::create(&err);
        INFO("create: " << err);
        REQUIRE(eng);
        REQUIRE(std::string(eng->device_info().platform) == "SKL");
    }
    ~Fixture() {
        eng.reset();
        if (node >= 0) kernel().close(node);
    }
    int wait(int fence, int ms = 5000) {
        const int r = BltEngine::wait_fence(fence, ms);
        kernel().close(fence);
        return r;
    }
};

}  // namespace

TEST_CASE("sim: buffer copies are byte-exact and leak-free", "[i915][sim]") {
    REQUIRE_SIM();
    struct vgen9_stats base{};
    {
        Fixture f;
        base = f.before;
        const size_t n = 3 << 20;
        SimBuffer s(f.node, n), d(f.node, n);
        fill(s.map, n, 1);
        std::memset(d.map, 0, n);
        std::vector<uint8_t> ref(d.map, d.map + n);
        BltImport si, di;
        REQUIRE(f.eng->import(s.dmabuf, 0, &si) == 0);
        REQUIRE(f.eng->import(d.dmabuf, 0, &di) == 0);
        std::mt19937 rng(11);
        const uint64_t edge[] = {1, 3, 63, 64, 32703, 32704, 32705, 32767, 32768, 65409, 2 << 20};
        for (int i = 0; i < 120; ++i) {
            const uint64_t size = i < 11 ? edge[i] : 1 + rng() % (i % 10 == 0 ? (2u << 20) : 70000u);
            const uint64_t so = rng() % (n - size), dof = rng() % (n - size);
            int fence = -1;
            REQUIRE(f.eng->submit_copy_buffer(si, di, so, dof, size, &fence) == 0);
            REQUIRE(f.wait(fence) == 1);
            std::memcpy(ref.data() + dof, s.map + so, size);
            INFO("copy " << i << " size " << size << " so " << so << " do " << dof);
            REQUIRE(std::memcmp(d.map, ref.data(), n) == 0);
        }
        // Several copies in flight, then one wait on the last (one ring, in order).
        std::vector<int> fences;
        for (int i = 0; i < 16; ++i) {
            int fence = -1;
            REQUIRE(f.eng->submit_copy_buffer(si, di, i * 4096, (i + 100) * 4096, 4096, &fence) == 0);
            std::memcpy(ref.data() + (i + 100) * 4096, s.map + i * 4096, 4096);
            fences.push_back(fence);
        }
        for (int fence : fences) REQUIRE(f.wait(fence) == 1);
        CHECK(std::memcmp(d.map, ref.data(), n) == 0);
        f.eng->release(si);
        f.eng->release(di);
        CHECK(f.eng->live_imports() == 0);
        CHECK(f.eng->stats().submits == 136);
    }
    vgen9().drain();
    struct vgen9_stats after{};
    vgen9().stats(&after);
    CHECK(after.live_objects == base.live_objects);
    CHECK(after.live_device_fds == base.live_device_fds);
    CHECK(after.live_dmabuf_fds == base.live_dmabuf_fds);
    CHECK(after.live_sync_fds == base.live_sync_fds);
    CHECK(after.live_mappings == base.live_mappings);
    CHECK(after.live_memfds == base.live_memfds);
}

TEST_CASE("sim: rect and tiled 2D copies", "[i915][sim]") {
    REQUIRE_SIM();
    Fixture f;
    const size_t n = 1 << 20;
    SimBuffer s(f.node, n), d(f.node, n);
    fill(s.map, n, 2);
    std::memset(d.map, 0, n);
    BltImport si, di;
    REQUIRE(f.eng->import(s.dmabuf, 0, &si) == 0);
    REQUIRE(f.eng->import(d.dmabuf, 0, &di) == 0);

    SECTION("rect, odd pitches, padded slices") {
        RectCopy r;
        r.width = 301, r.height = 37, r.depth = 3;
        r.src_row_pitch = 1001, r.dst_row_pitch = 517;
        r.src_slice_pitch = 1001 * 40, r.dst_slice_pitch = 517 * 37;
        r.src_x = 5, r.src_y = 1, r.dst_x = 3, r.dst_y = 0, r.dst_base = 77;
        std::vector<uint8_t> ref(d.map, d.map + n);
        for (uint64_t z = 0; z < 3; ++z)
            for (uint64_t y = 0; y < 37; ++y)
                std::memcpy(ref.data() + 77 + z * 517 * 37 + y * 517 + 3, s.map + z * 1001 * 40 + (y + 1) * 1001 + 5, 301);
        int fence = -1;
        REQUIRE(f.eng->submit_copy_rect(si, di, r, &fence) == 0);
        REQUIRE(f.wait(fence) == 1);
        CHECK(std::memcmp(d.map, ref.data(), n) == 0);
    }
    SECTION("Y-tiled to linear and linear to X-tiled, 32 bpp and 128-bit elements") {
        struct T { Tiling st, dt; uint32_t es; };
        for (T t : {T{Tiling::Y, Tiling::Linear, 4}, T{Tiling::Linear, Tiling::X, 4},
                    T{Tiling::Y, Tiling::X, 16}, T{Tiling::X, Tiling::Y, 1}}) {
            ImageCopy c;
            c.elem_size = t.es;
            c.src.tiling = t.st, c.dst.tiling = t.dt;
            c.src.pitch = 2048, c.dst.pitch = 2048;
            c.width = 100 * 4 / t.es + 3, c.height = 45;
            c.src.x = 7, c.src.y = 3, c.dst.x = 2, c.dst.y = 9;
            std::memset(d.map, 0, n);
            std::vector<uint8_t> ref(d.map, d.map + n);
            auto addr = [](Tiling tl, uint64_t p, uint64_t xb, uint64_t y) {
                return tl == Tiling::Y ? y_tiled(p, xb, y) : tl == Tiling::X ? x_tiled(p, xb, y) : y * p + xb;
            };
            for (uint32_t y = 0; y < c.height; ++y)
                for (uint64_t xb = 0; xb < uint64_t(c.width) * t.es; ++xb)
                    ref[addr(t.dt, 2048, c.dst.x * t.es + xb, c.dst.y + y)] =
                        s.map[addr(t.st, 2048, c.src.x * t.es + xb, c.src.y + y)];
            int fence = -1;
            REQUIRE(f.eng->submit_copy_2d(si, di, c, &fence) == 0);
            REQUIRE(f.wait(fence) == 1);
            INFO("tiling " << int(t.st) << "->" << int(t.dt) << " es " << t.es);
            CHECK(std::memcmp(d.map, ref.data(), n) == 0);
        }
    }
    f.eng->release(si);
    f.eng->release(di);
}

TEST_CASE("sim: fault injection", "[i915][sim]") {
    REQUIRE_SIM();
    Fixture f;
    SimBuffer s(f.node, 65536), d(f.node, 65536);
    fill(s.map, 65536, 3);
    BltImport si, di;
    REQUIRE(f.eng->import(s.dmabuf, 0, &si) == 0);
    REQUIRE(f.eng->import(d.dmabuf, 0, &di) == 0);
    int fence = -1;

    SECTION("EINTR and EAGAIN are retried") {
        for (int e : {EINTR, EAGAIN}) {
            REQUIRE(vgen9().fail_ioctl(DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, 1, e) == 0);
            std::memset(d.map, 0, 65536);
            REQUIRE(f.eng->submit_copy_buffer(si, di, 0, 0, 65536, &fence) == 0);
            REQUIRE(f.wait(fence) == 1);
            CHECK(std::memcmp(d.map, s.map, 65536) == 0);
        }
    }
    SECTION("ENOMEM, ENOSPC, EIO surface as -errno, then the engine recovers") {
        for (int e : {ENOMEM, ENOSPC, EIO}) {
            REQUIRE(vgen9().fail_ioctl(DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, 1, e) == 0);
            CHECK(f.eng->submit_copy_buffer(si, di, 0, 0, 4096, &fence) == -e);
        }
        REQUIRE(f.eng->submit_copy_buffer(si, di, 0, 0, 4096, &fence) == 0);
        CHECK(f.wait(fence) == 1);
        CHECK(f.eng->batch_buffers() == 1);
    }
    SECTION("hung ring: the fence reports -EIO") {
        vgen9().hang_next(1);
        REQUIRE(f.eng->submit_copy_buffer(si, di, 0, 0, 4096, &fence) == 0);
        CHECK(f.wait(fence) == -EIO);
        // The next submission runs normally.
        REQUIRE(f.eng->submit_copy_buffer(si, di, 0, 0, 4096, &fence) == 0);
        CHECK(f.wait(fence) == 1);
        CHECK(std::memcmp(d.map, s.map, 4096) == 0);
    }
    SECTION("never-signalled fence: wait times out, reset completes it with -EIO") {
        vgen9().never_signal_next(1);
        REQUIRE(f.eng->submit_copy_buffer(si, di, 0, 0, 4096, &fence) == 0);
        CHECK(BltEngine::wait_fence(fence, 50) == 0);
        CHECK(BltEngine::wait_fence(fence, 0) == 0);
        vgen9().reset();
        CHECK(f.wait(fence) == -EIO);
    }
    f.eng->release(si);
    f.eng->release(di);
}

TEST_CASE("sim: a batch held by its FENCE_IN holds back only its own GEM context", "[i915][sim]") {
    REQUIRE_SIM();
    Fixture f;
    const size_t n = 64 << 10;
    SimBuffer s(f.node, n), d1(f.node, n), d2(f.node, n), d3(f.node, n);
    fill(s.map, n, 5);
    BltImport si, i1, i2, i3;
    REQUIRE(f.eng->import(s.dmabuf, 0, &si) == 0);
    REQUIRE(f.eng->import(d1.dmabuf, 0, &i1) == 0);
    REQUIRE(f.eng->import(d2.dmabuf, 0, &i2) == 0);
    REQUIRE(f.eng->import(d3.dmabuf, 0, &i3) == 0);
    const size_t contexts = f.eng->live_contexts();
    BltContext a, b;
    REQUIRE(f.eng->open_context(&a) == 0);
    REQUIRE(f.eng->open_context(&b) == 0);
    CHECK(a.id != b.id);
    CHECK(a.cancel_support == 0);  // non-persistent: destroying it cancels
    CHECK(f.eng->live_contexts() == contexts + 2);
    // A stuck batch on the engine's own context, and a batch of `a` waiting for it.
    vgen9().never_signal_next(1);
    int stuck = -1, held = -1, free_running = -1;
    REQUIRE(f.eng->submit_copy_buffer(si, i1, 0, 0, n, &stuck) == 0);
    REQUIRE(f.eng->submit_copy_buffer(si, i2, 0, 0, n, &held, stuck, &a) == 0);
    REQUIRE(f.eng->submit_copy_buffer(si, i3, 0, 0, n, &free_running, -1, &b) == 0);
    CHECK(f.wait(free_running) == 1);  // `b` is not held behind `a`
    CHECK(std::memcmp(d3.map, s.map, n) == 0);
    CHECK(BltEngine::wait_fence(held, 50) == 0);
    f.eng->close_context(&a);  // cancelled: it ends once its in-fence does, unwritten
    CHECK(a.id == 0);
    vgen9().reset();           // the stuck fence ends (-EIO)
    CHECK(f.wait(held) == -EIO);
    CHECK(f.wait(stuck) == -EIO);
    f.eng->close_context(&b);
    CHECK(f.eng->live_contexts() == contexts);
    for (auto *imp : {&si, &i1, &i2, &i3}) f.eng->release(*imp);
}

TEST_CASE("sim: instance() finds the virtual node", "[i915][sim]") {
    REQUIRE_SIM();
    BltEngine *e = BltEngine::instance();
    REQUIRE(e != nullptr);
    CHECK(e->device_info().device_id == 0x1916);
    CHECK(BltEngine::instance() == e);
}

// The probe reads the node's PCI address the way it does on Linux (stat the
// node, resolve /sys/dev/char/226:N/device); the sim answers with
// CLDMABUF_SIM_PCI_SLOT or 0000:00:02.0 (meson runs both: i915-blt-sim-pci).
TEST_CASE("sim: the probe records the node's PCI address", "[i915][sim][pci]") {
    REQUIRE_SIM();
    BltEngine *e = BltEngine::instance();
    REQUIRE(e != nullptr);
    const char *slot = std::getenv("CLDMABUF_SIM_PCI_SLOT");
    const std::string want = slot && *slot ? slot : "0000:00:02.0";
    REQUIRE(e->device_info().has_pci);
    CHECK(cldmabuf::pci_text(e->device_info().pci) == want);
    cldmabuf::DeviceFacts gpu;
    gpu.type = CL_DEVICE_TYPE_GPU;
    gpu.vendor_id = 0x8086;
    gpu.has_pci = true;
    REQUIRE(cldmabuf::parse_pci_address(want, &gpu.pci));
    CHECK(cldmabuf::device_mismatch(gpu, e->device_info()).empty());
    REQUIRE(cldmabuf::parse_pci_address("0000:00:02.0", &gpu.pci));
    CHECK(cldmabuf::device_mismatch(gpu, e->device_info()).empty() == (want == "0000:00:02.0"));
}

TEST_CASE("sim: concurrent submitters on one engine", "[i915][sim]") {
    REQUIRE_SIM();
    Fixture f;
    const size_t n = 1 << 20;
    SimBuffer s(f.node, n), d(f.node, n);
    fill(s.map, n, 4);
    std::memset(d.map, 0, n);
    BltImport si, di;
    REQUIRE(f.eng->import(s.dmabuf, 0, &si) == 0);
    REQUIRE(f.eng->import(d.dmabuf, 0, &di) == 0);
    constexpr int kThreads = 4, kCopies = 40;
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            const uint64_t slice = n / kThreads;
            for (int i = 0; i < kCopies; ++i) {
                const uint64_t size = 1 + (i * 977) % 6000;
                const uint64_t off = t * slice + (i * 6007) % (slice - size);
                int fence = -1;
                if (f.eng->submit_copy_buffer(si, di, off, off, size, &fence) != 0 ||
                    BltEngine::wait_fence(fence, 5000) != 1)
                    ++failures;
                if (fence >= 0) kernel().close(fence);
            }
        });
    for (auto &th : threads) th.join();
    CHECK(failures == 0);
    // Every byte either copied or still zero; copied bytes equal the source.
    for (size_t i = 0; i < n; ++i)
        if (d.map[i] != 0 && d.map[i] != s.map[i]) FAIL("byte " << i << " corrupted");
    CHECK(f.eng->stats().submits == uint64_t(kThreads * kCopies));
    f.eng->release(si);
    f.eng->release(di);
}
