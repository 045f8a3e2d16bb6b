// BltEngine, GEM state, execbuffer and the Gen9 probe against the in-process
// fake i915 (fake_i915.hpp) installed through cldmabuf::set_kernel().
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <utility>

#include "fake_i915.hpp"
#include "layer/i915/blt_engine.hpp"
#include "layer/i915/gem.hpp"
#include "layer/i915/gen9_probe.hpp"

using namespace cldmabuf::i915;
using fake::FakeI915;
using fake::ScopedKernel;

namespace {

void fill(std::vector<uint8_t> &v, uint32_t seed) {
    for (auto &c : v) { seed = seed * 1664525u + 1013904223u; c = uint8_t(seed >> 24); }
}

// The engine on the fake kernel installed (ScopedKernel), which must open it.
std::unique_ptr<BltEngine> created_engine() {
    auto eng = BltEngine::create();
    REQUIRE(eng);
    return eng;
}

// Two fresh dma-bufs of `size` bytes imported into the engine: a copy's source and destination.
std::pair<BltImport, BltImport> import_pair(BltEngine &eng, FakeI915 &k, size_t size) {
    BltImport src, dst;
    REQUIRE(eng.import(k.add_dmabuf(size), 0, &src) == 0);
    REQUIRE(eng.import(k.add_dmabuf(size), 0, &dst) == 0);
    return {src, dst};
}

}  // namespace

TEST_CASE("probe: Gen9 i915 node accepted, others refused", "[i915][probe]") {
    FakeI915 k;
    ScopedKernel sk(&k);
    Gen9Info info;
    REQUIRE(probe_gen9(&info) == 0);
    CHECK(info.path == "/dev/dri/renderD128");
    CHECK(info.fd == FakeI915::kNodeFd);
    CHECK(info.device_id == 0x1916);
    CHECK(info.vendor_id == 0x8086);
    CHECK(std::string(info.platform) == "SKL");
    CHECK(info.has_llc);
    k.close(info.fd);

    k.chipset = 0x9A49;  // TGL (Gen12): not Gen9
    CHECK(probe_gen9(&info) == -ENODEV);
    k.chipset = 0x5A84;  // BXT is Gen9
    REQUIRE(probe_gen9(&info) == 0);
    CHECK(std::string(info.platform) == "BXT");
    k.close(info.fd);
    k.chipset = 0x1916;
    k.has_softpin = false;
    CHECK(probe_gen9(&info) == -ENODEV);
    k.has_softpin = true;
    k.driver = "amdgpu";
    CHECK(probe_gen9(&info) == -ENODEV);
    k.driver = "i915";
    k.dri = {"card0"};
    CHECK(probe_gen9(&info) == -ENODEV);
    // Every refused node was closed again.
    CHECK(k.node_opens == k.node_closes);
}

TEST_CASE("probe: PCI id table spot checks", "[i915][probe]") {
    CHECK(std::string(gen9_platform(0x1916)) == "SKL");  // HD 520
    CHECK(std::string(gen9_platform(0x193D)) == "SKL");
    CHECK(std::string(gen9_platform(0x3185)) == "GLK");
    CHECK(std::string(gen9_platform(0x5917)) == "KBL");
    CHECK(std::string(gen9_platform(0x87C0)) == "KBL");
    CHECK(std::string(gen9_platform(0x3E9B)) == "CFL");
    CHECK(std::string(gen9_platform(0x3EA0)) == "WHL");
    CHECK(std::string(gen9_platform(0x9BC4)) == "CML");
    CHECK(gen9_platform(0x1616) == nullptr);  // BDW (Gen8)
    CHECK(gen9_platform(0x5A52) == nullptr);  // CNL (Gen10)
    CHECK(gen9_platform(0x8A52) == nullptr);  // ICL (Gen11)
}

TEST_CASE("VaAllocator: page-aligned, reused, canonical", "[i915][gem]") {
    VaAllocator va;
    const uint64_t a = va.alloc(1);
    const uint64_t b = va.alloc(8192 + 1);
    const uint64_t c = va.alloc(4096);
    CHECK(a % 4096 == 0);
    CHECK(b == a + 4096);
    CHECK(c == b + 3 * 4096);
    va.free(b, 8192 + 1);
    CHECK(va.alloc(4096) == b);          // best fit from the free list, split
    CHECK(va.alloc(8192) == b + 4096);   // the two pages left of the 3-page hole
    CHECK(canonical_address(0x0000800000000000ull) == 0xFFFF800000000000ull);
    CHECK(canonical_address(0x00007FFFFFFFF000ull) == 0x00007FFFFFFFF000ull);
    VaAllocator small(4096, 3 * 4096);
    CHECK(small.alloc(4096) == 4096);
    CHECK(small.alloc(8192) == 0);  // exhausted
}

TEST_CASE("engine: import, copy, execbuffer contents", "[i915][engine]") {
    FakeI915 k;
    ScopedKernel sk(&k);
    int err = 1;
    auto eng = BltEngine::create(&err);
    REQUIRE(err == 0);
    REQUIRE(eng);
    CHECK(k.ctx_created == 7);

    const int sfd = k.add_dmabuf(1 << 20), dfd = k.add_dmabuf(1 << 20);
    fill(k.bytes_of_fd(sfd), 1);
    BltImport src, dst;
    REQUIRE(eng->import(sfd, 0, &src) == 0);
    REQUIRE(eng->import(dfd, 1 << 20, &dst) == 0);
    CHECK(src.size == (1u << 20));
    CHECK(src.gpu_addr % 4096 == 0);
    CHECK((dst.gpu_addr >= src.gpu_addr + src.size || src.gpu_addr >= dst.gpu_addr + dst.size));

    int fence = -1;
    REQUIRE(eng->submit_copy_buffer(src, dst, 3, 129, 100000, &fence) == 0);
    CHECK(fence >= 1000);
    REQUIRE(k.execs.size() == 1);
    const auto &x = k.execs[0];
    CHECK(x.eb.flags == (I915_EXEC_BLT | I915_EXEC_NO_RELOC | I915_EXEC_HANDLE_LUT |
                         I915_EXEC_BATCH_FIRST | I915_EXEC_FENCE_OUT));
    CHECK(x.eb.rsvd1 == 7);
    CHECK(x.eb.batch_len % 8 == 0);
    CHECK(x.eb.batch_start_offset == 0);
    CHECK(x.eb.DR1 == 0);
    CHECK(x.eb.DR4 == 0);
    REQUIRE(x.objs.size() == 3);
    const uint64_t pin = EXEC_OBJECT_PINNED | EXEC_OBJECT_SUPPORTS_48B_ADDRESS;
    CHECK(x.objs[0].flags == pin);  // batch first, never WRITE
    CHECK(x.objs[1].handle == src.handle);
    CHECK(x.objs[1].offset == src.gpu_addr);
    CHECK(x.objs[1].flags == pin);  // source: read only
    CHECK(x.objs[2].handle == dst.handle);
    CHECK(x.objs[2].offset == dst.gpu_addr);
    CHECK(x.objs[2].flags == (pin | EXEC_OBJECT_WRITE));
    for (const auto &o : x.objs) CHECK(o.offset % 4096 == 0);
    CHECK(x.batch.size() % 2 == 0);
    CHECK(std::count(x.batch.begin(), x.batch.end(), 0x05000000u) == 1);
    // The fake executed the batch: bytes match memcpy.
    auto &s = k.bytes_of_fd(sfd);
    auto &d = k.bytes_of_fd(dfd);
    CHECK(std::memcmp(d.data() + 129, s.data() + 3, 100000) == 0);
    CHECK(d[128] == 0);
    CHECK(d[129 + 100000] == 0);
    CHECK(BltEngine::wait_fence(fence, 1000) == 1);
    k.close(fence);

    const auto st = eng->stats();
    CHECK(st.submits == 1);
    CHECK(st.bytes == 100000);
    CHECK(st.blits >= 1);

    eng->release(src);
    eng->release(dst);
    CHECK(eng->live_imports() == 0);
    CHECK(std::count(k.closed_handles.begin(), k.closed_handles.end(), src.handle) == 1);
    eng.reset();
    CHECK(k.ctx_destroyed == 7);
    CHECK(k.node_closes == 1);
    CHECK(k.munmaps == k.mmaps);
    CHECK(k.live_handles() == 0);
    CHECK(k.live_fences.empty());
}

TEST_CASE("engine: random copies through the fake are byte-exact", "[i915][engine]") {
    FakeI915 k;
    ScopedKernel sk(&k);
    auto eng = created_engine();
    const size_t n = 300000;
    const int sfd = k.add_dmabuf(n), dfd = k.add_dmabuf(n);
    fill(k.bytes_of_fd(sfd), 9);
    BltImport src, dst;
    REQUIRE(eng->import(sfd, 0, &src) == 0);
    REQUIRE(eng->import(dfd, 0, &dst) == 0);
    std::vector<uint8_t> ref(n, 0);
    std::mt19937 rng(5);
    for (int i = 0; i < 300; ++i) {
        int fence = -1;
        if (i % 2) {
            const uint64_t size = 1 + rng() % 70000, so = rng() % (n - size), dof = rng() % (n - size);
            REQUIRE(eng->submit_copy_buffer(src, dst, so, dof, size, &fence) == 0);
            std::memcpy(ref.data() + dof, k.bytes_of_fd(sfd).data() + so, size);
        } else {
            RectCopy r;
            r.width = 1 + rng() % 500, r.height = 1 + rng() % 50, r.depth = 1 + rng() % 3;
            r.src_row_pitch = r.width + rng() % 9, r.dst_row_pitch = r.width + rng() % 9;
            r.src_x = rng() % 5, r.dst_x = rng() % 5, r.src_y = rng() % 3, r.dst_y = rng() % 3;
            const uint64_t ss = r.src_row_pitch * r.height, ds = r.dst_row_pitch * r.height;
            for (uint64_t z = 0; z < r.depth; ++z)
                for (uint64_t y = 0; y < r.height; ++y)
                    std::memcpy(ref.data() + z * ds + (r.dst_y + y) * r.dst_row_pitch + r.dst_x,
                                k.bytes_of_fd(sfd).data() + z * ss + (r.src_y + y) * r.src_row_pitch + r.src_x,
                                r.width);
            REQUIRE(eng->submit_copy_rect(src, dst, r, &fence) == 0);
        }
        REQUIRE(BltEngine::wait_fence(fence, 100) == 1);
        k.close(fence);
    }
    CHECK(k.bytes_of_fd(dfd) == ref);
    // Batches were recycled: GEM_CREATE did not happen per copy.
    CHECK(k.creates <= 2);
    CHECK(eng->batch_buffers() == size_t(k.creates));
}

TEST_CASE("engine: same dma-buf imported twice shares handle and address", "[i915][engine]") {
    FakeI915 k;
    ScopedKernel sk(&k);
    auto eng = created_engine();
    const int fd = k.add_dmabuf(64 * 1024);
    BltImport a, b;
    REQUIRE(eng->import(fd, 0, &a) == 0);
    REQUIRE(eng->import(fd, 4096, &b) == 0);  // a smaller sub-view is fine
    CHECK(a.handle == b.handle);
    CHECK(a.gpu_addr == b.gpu_addr);
    CHECK(eng->live_imports() == 1);
    // Copy inside one object: one exec object carrying WRITE.
    int fence = -1;
    REQUIRE(eng->submit_copy_buffer(a, b, 0, 2048, 1024, &fence) == 0);
    REQUIRE(k.execs.back().objs.size() == 2);
    CHECK((k.execs.back().objs[1].flags & EXEC_OBJECT_WRITE) != 0);
    k.close(fence);
    CHECK(eng->submit_copy_buffer(a, b, 0, 100, 200, &fence) == -EINVAL);  // overlap
    eng->release(a);
    CHECK(k.closed_handles.empty());  // still referenced
    eng->release(b);
    CHECK(k.closed_handles.size() == 1);
    CHECK(eng->import(fd, 128 * 1024, &a) == -EINVAL);  // bigger than the dma-buf
}

TEST_CASE("engine: bounds and errors", "[i915][engine]") {
    FakeI915 k;
    ScopedKernel sk(&k);
    auto eng = created_engine();
    const auto [src, dst] = import_pair(*eng, k, 8192);
    int fence = -1;
    CHECK(eng->submit_copy_buffer(src, dst, 8000, 0, 193, &fence) == -EINVAL);
    CHECK(eng->submit_copy_buffer(src, dst, 0, 8192, 1, &fence) == -EINVAL);
    RectCopy r;
    r.width = 100, r.height = 100, r.src_row_pitch = 100;  // 10000 > 8192
    CHECK(eng->submit_copy_rect(src, dst, r, &fence) == -EINVAL);
    ImageCopy ic;
    ic.elem_size = 4;
    ic.src.tiling = Tiling::X;
    ic.src.pitch = 512;
    ic.dst.pitch = 512;
    ic.width = 128, ic.height = 17;  // X tiles of 8 rows: 3 tile rows = 12 KiB > 8 KiB
    CHECK(eng->submit_copy_2d(src, dst, ic, &fence) == -EINVAL);
    ic.height = 16;
    CHECK(eng->submit_copy_2d(src, dst, ic, &fence) == 0);
    k.close(fence);
    CHECK(k.execs.size() == 1);
    // Right edge of an exactly-sized X-tiled surface (1 tile row of 2 tiles = 8 KiB).
    ic.src.pitch = 1024, ic.dst.pitch = 512;
    ic.src.x = 128, ic.width = 128, ic.height = 8;
    REQUIRE(eng->submit_copy_2d(src, dst, ic, &fence) == 0);
    k.close(fence);
    ic.height = 9;
    CHECK(eng->submit_copy_2d(src, dst, ic, &fence) == -EINVAL);

    // execbuffer errors: EINTR/EAGAIN retried, others surfaced.
    k.exec_errors = {EINTR, EAGAIN, 0};
    REQUIRE(eng->submit_copy_buffer(src, dst, 0, 0, 64, &fence) == 0);
    k.close(fence);
    for (int e : {ENOMEM, ENOSPC, EIO, EINVAL}) {
        k.exec_errors = {e};
        CHECK(eng->submit_copy_buffer(src, dst, 0, 0, 64, &fence) == -e);
    }
    CHECK(eng->stats().submits == 3);
    // A failed submission gives its batch back: no new batch buffer appears.
    CHECK(eng->batch_buffers() == 1);
}

TEST_CASE("engine: batch pool recycles only idle batches", "[i915][engine]") {
    FakeI915 k;
    ScopedKernel sk(&k);
    auto eng = created_engine();
    const auto [src, dst] = import_pair(*eng, k, 8192);
    k.busy = 1;  // everything stays busy
    std::vector<int> fences;
    for (int i = 0; i < 5; ++i) {
        int f;
        REQUIRE(eng->submit_copy_buffer(src, dst, 0, 0, 64, &f) == 0);
        fences.push_back(f);
    }
    CHECK(eng->batch_buffers() == 5);
    k.busy = 0;
    for (int i = 0; i < 5; ++i) {
        int f;
        REQUIRE(eng->submit_copy_buffer(src, dst, 0, 0, 64, &f) == 0);
        fences.push_back(f);
    }
    CHECK(eng->batch_buffers() == 5);
    // Distinct batch objects were used while busy.
    std::set<uint32_t> handles;
    for (size_t i = 0; i < 5; ++i) handles.insert(k.execs[i].objs[0].handle);
    CHECK(handles.size() == 5);
    for (int f : fences) k.close(f);
    // A big rect with one blit per row needs a bigger batch: allocated once.
    RectCopy r;
    r.width = 8, r.height = 500, r.src_row_pitch = 40000, r.dst_row_pitch = 8;
    BltImport big;
    REQUIRE(eng->import(k.add_dmabuf(40000 * 500), 0, &big) == 0);
    int f;
    REQUIRE(eng->submit_copy_rect(big, dst, r, &f) == 0);
    k.close(f);
    CHECK(k.execs.back().batch.size() > 16 * 1024 / 4);
}

TEST_CASE("engine: a full batch pool reuses any idle batch before waiting on a stuck oldest one",
          "[i915][engine]") {
    FakeI915 k;
    ScopedKernel sk(&k);
    auto eng = created_engine();
    const auto [src, dst] = import_pair(*eng, k, 8192);
    k.busy = 1;
    std::vector<int> fences;
    for (size_t i = 0; i < GemDevice::kMaxBatches; ++i) {
        int f;
        REQUIRE(eng->submit_copy_buffer(src, dst, 0, 0, 64, &f) == 0);
        fences.push_back(f);
    }
    REQUIRE(eng->batch_buffers() == GemDevice::kMaxBatches);
    // The first batch waits on a fence that never signals; every later one finished.
    const uint32_t stuck = k.execs[0].objs[0].handle;
    k.busy = 0;
    k.busy_handles = {stuck};
    const size_t waits_before = k.gem_waits;
    int f;
    REQUIRE(eng->submit_copy_buffer(src, dst, 0, 0, 64, &f) == 0);
    fences.push_back(f);
    CHECK(k.gem_waits == waits_before);                  // no wait on the stuck batch
    CHECK(k.execs.back().objs[0].handle != stuck);       // an idle one was reused
    CHECK(eng->batch_buffers() == GemDevice::kMaxBatches);  // and the pool did not grow
    for (int fd : fences) k.close(fd);
}

TEST_CASE("engine: a full batch pool with every batch in flight refuses at once, without a kernel wait",
          "[i915][engine]") {
    FakeI915 k;
    ScopedKernel sk(&k);
    auto eng = created_engine();
    const auto [src, dst] = import_pair(*eng, k, 8192);
    k.busy = 1;
    std::vector<int> fences;
    for (size_t i = 0; i < GemDevice::kMaxBatches; ++i) {
        int f;
        REQUIRE(eng->submit_copy_buffer(src, dst, 0, 0, 64, &f) == 0);
        fences.push_back(f);
    }
    const size_t waits_before = k.gem_waits, execs_before = k.execs.size();
    int f = -1;
    CHECK(eng->submit_copy_buffer(src, dst, 0, 0, 64, &f) == -EBUSY);
    CHECK(k.gem_waits == waits_before);
    CHECK(k.execs.size() == execs_before);
    CHECK(eng->batch_buffers() == GemDevice::kMaxBatches);
    k.busy = 0;  // they retired: the next one reuses a buffer
    REQUIRE(eng->submit_copy_buffer(src, dst, 0, 0, 64, &f) == 0);
    fences.push_back(f);
    CHECK(eng->batch_buffers() == GemDevice::kMaxBatches);
    for (int fd : fences) k.close(fd);
}

TEST_CASE("engine: a batch held by its fences does not grow the pool while later ones retire",
          "[i915][engine]") {
    FakeI915 k;
    ScopedKernel sk(&k);
    auto eng = created_engine();
    const auto [src, dst] = import_pair(*eng, k, 8192);
    k.busy = 1;
    int f1 = -1, f2 = -1;
    REQUIRE(eng->submit_copy_buffer(src, dst, 0, 0, 64, &f1) == 0);
    REQUIRE(eng->submit_copy_buffer(src, dst, 0, 0, 64, &f2) == 0);
    REQUIRE(eng->batch_buffers() == 2);
    // The oldest waits (another context's in-fence); the second retired.
    const uint32_t held = k.execs[0].objs[0].handle;
    k.busy = 0;
    k.busy_handles = {held};
    for (int i = 0; i < 5; ++i) {
        int f = -1;
        REQUIRE(eng->submit_copy_buffer(src, dst, 0, 0, 64, &f) == 0);
        CHECK(k.execs.back().objs[0].handle != held);
        k.close(f);
    }
    CHECK(eng->batch_buffers() == 2);
    k.close(f1);
    k.close(f2);
}

TEST_CASE("engine: no LLC maps batches WC", "[i915][engine]") {
    FakeI915 k;
    k.chipset = 0x3184;  // GLK
    k.has_llc = false;
    ScopedKernel sk(&k);
    auto eng = created_engine();
    const auto [src, dst] = import_pair(*eng, k, 4096);
    int f;
    REQUIRE(eng->submit_copy_buffer(src, dst, 0, 0, 64, &f) == 0);
    CHECK(k.last_mmap_flags == I915_MMAP_OFFSET_WC);
    k.close(f);
}

TEST_CASE("wait_fence: signalled, timeout, error status", "[i915][engine]") {
    FakeI915 k;
    ScopedKernel sk(&k);
    auto eng = created_engine();
    const auto [src, dst] = import_pair(*eng, k, 4096);
    int f;
    REQUIRE(eng->submit_copy_buffer(src, dst, 0, 0, 64, &f) == 0);
    CHECK(BltEngine::wait_fence(f, 0) == 1);
    k.fence_ready = false;
    CHECK(BltEngine::wait_fence(f, 10) == 0);
    k.fence_ready = true;
    k.fence_status = -EIO;
    CHECK(BltEngine::wait_fence(f, 10) == -EIO);
    CHECK(BltEngine::wait_fence(-1, 10) == -EBADF);
    k.close(f);
}

TEST_CASE("engine: CLDMABUF_BLT=off and no node", "[i915][engine]") {
    FakeI915 k;
    k.dri = {};
    ScopedKernel sk(&k);
    int err = 0;
    CHECK(BltEngine::create(&err) == nullptr);
    CHECK(err == -ENODEV);
}
