// The mapping cache (on by default; CLDMABUF_MAP_CACHE_MB sets its budget): a
// dma-buf imported again reuses the mapping its last import made, imports of
// one dma-buf alive together each have their own, parked mappings stay within
// the budget and go once only the cache holds their dma-buf
// (layer/dmabuf/mapping_cache.hpp).  Runs with the default budget (e2e-sim)
// and a 16 MiB one (e2e-sim-mapcache, tests/e2e/meson.build), and in the VM
// lane on the system dma-heap, whose mmap is the O(size) cost the cache removes.
#include <catch2/catch_test_macros.hpp>

#include <linux/ioctl.h>  // _IOWR behind the DMA_BUF_IOCTL_* numbers (issue #29)
#include <linux/dma-buf.h>
#include <unistd.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

#include "cl_fixture.hpp"
#include "destroy_mem.hpp"
#include "device_sum.hpp"
#include "layer_probe.hpp"
#include "test_dmabufs.hpp"
#include "test_env.hpp"

using namespace e2e;
namespace tsup = cldmabuf::test;

namespace {

// Mappings of this dma-buf in /proc/self/maps (by inode: kernel builds and
// ICD threads map other things meanwhile).  Counted relative to the start:
// an exporter may map its own buffers (the virtual Gen9 does).
int mappings_of(const Dmabuf &buf) {
    struct stat st;
    REQUIRE(fstat(buf.fd, &st) == 0);
    return mappings_of_inode(st.st_ino);
}

long cache_mb() {
    const char *v = std::getenv("CLDMABUF_MAP_CACHE_MB");
    return v && *v ? std::atol(v) : 512;  // the default (64-bit)
}

cl_mem import_dup(const ClEnv &env, const Dmabuf &buf, size_t size) {
    const int fd = buf.dup_fd();
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd), 0};
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, size, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    return mem;  // owns fd
}

void fill(const Dmabuf &buf, size_t count, uint32_t value) {
    auto *w = static_cast<uint32_t *>(tsup::map(buf));
    tsup::sync(buf.fd, DMA_BUF_SYNC_WRITE | DMA_BUF_SYNC_START);
    for (size_t i = 0; i < count; ++i) w[i] = value;
    tsup::sync(buf.fd, DMA_BUF_SYNC_WRITE | DMA_BUF_SYNC_END);
    tsup::unmap(w, buf.size);
}

}  // namespace

// Its fd counts are the imports' own, so it runs where no release fence adds
// an fd (e2e-sim-mapcache).
TEST_CASE("mapping cache: re-imports reuse the mapping, live imports have their own, the budget evicts",
          "[.][mapcache]") {
    REQUIRE_DMABUF();
    const long mb = cache_mb();
    if (mb < 8) SKIP("CLDMABUF_MAP_CACHE_MB is set below 8 MiB");
    if (tsup::env_is("CLDMABUF_STAGING", "register"))
        SKIP("a registered copy-route import maps its dma-buf once more (the registration's own mapping)");
    ClEnv env;
    const size_t size = 1 << 20, count = size / 4;
    Dmabuf buf = make_dmabuf(size);
    fill(buf, count, 3);

    const int base = mappings_of(buf);
    cl_mem first = import_dup(env, buf, size);
    CHECK(mappings_of(buf) == base + 1);
    CHECK(device_sum(env, first, count) == 3ull * count);
    // Settled: a release step lets go of its release fence (an fd where a
    // fence source exists) a moment after clFinish.
    const int fds_with_import = settled_fds();
    destroy(env, first);
    // Kept: the mapping is still there, the fds are not (the application's,
    // owned by the import, and the layer's own duplicate); the parked
    // mapping's own fd is left out of the count like the mapping itself.
    CHECK(mappings_of(buf) == base + 1);
    CHECK(open_fds_toward(fds_with_import - 3) == fds_with_import - 3);

    // Same dma-buf, another fd: no new mapping, and the device sees new data.
    fill(buf, count, 5);
    cl_mem again = import_dup(env, buf, size);
    CHECK(mappings_of(buf) == base + 1);
    CHECK(device_sum(env, again, count) == 5ull * count);
    // A second live import of the same dma-buf maps it again: a mapping
    // belongs to one live import (a failed acquire's shield replaces it).
    cl_mem twin = import_dup(env, buf, size / 2);
    CHECK(mappings_of(buf) == base + 2);
    CHECK(device_sum(env, twin, count / 2) == 5ull * (count / 2));
    destroy(env, twin);
    CHECK(mappings_of(buf) == base + 2);  // parked
    destroy(env, again);
    CHECK(mappings_of(buf) == base + 2);  // both parked

    // A buffer larger than the whole budget is not kept past its import, and
    // pushes nothing else out (checked where the budget is small enough to
    // allocate past it).
    if (mb > 64) return;
    const size_t big = static_cast<size_t>(mb + 1) << 20;
    Dmabuf large = make_dmabuf(big);
    const int large_base = mappings_of(large);
    cl_mem l = import_dup(env, large, big);
    CHECK(mappings_of(large) == large_base + 1);
    destroy(env, l);
    CHECK(mappings_of(large) == large_base);
    CHECK(mappings_of(buf) == base + 2);

    // Another dma-buf's mapping joins the idle set while both fit.
    Dmabuf other = make_dmabuf(size);
    const int other_base = mappings_of(other);
    cl_mem o = import_dup(env, other, size);
    destroy(env, o);
    CHECK(mappings_of(other) == other_base + 1);
    CHECK(mappings_of(buf) == base + 2);
}

TEST_CASE("mapping cache: a parked mapping goes once its dma-buf is freed", "[mapcache]") {
    REQUIRE_DMABUF();
    ClEnv env;
    const size_t size = 1 << 20;
    struct stat st {};
    std::string maps_before;
    {
        Dmabuf buf = make_dmabuf(size);
        REQUIRE(fstat(buf.fd, &st) == 0);
        const int base = mappings_of(buf);
        destroy(env, import_dup(env, buf, size));
        CHECK(mappings_of(buf) == base + 1);  // parked while the producer holds the buffer
    }  // the producer frees it: only the cache's own fd and mapping are left
    // The cache looks every 50 ms while anything is parked.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(mappings_of_inode(st.st_ino) == 0);
}

