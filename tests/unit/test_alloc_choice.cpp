// The allocator's exporter choice and its three exporters over a fake kernel
// (layer/alloc/): the order and what the setting allows, the fallback when an
// exporter is missing or refuses, the spec's error for each errno, and that a
// failed exporter leaves no fd, memfd or GEM handle behind.
#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>

#include <drm.h>
#include <i915_drm.h>

#include <map>
#include <set>
#include <string>

#include "fake_kernel.hpp"
#include "layer/alloc/allocate.hpp"
#include "layer/alloc/exporter_choice.hpp"
#include "layer/alloc/exporters.hpp"
#include "layer/i915/gem_export.hpp"

using namespace cldmabuf;

namespace {

using E = AllocExporter;

// The device nodes that exist, every fd handed out and not closed, and the
// errno each ioctl answers (0: success).
struct AllocKernel : unit::FakeKernel {
    std::set<std::string> nodes;
    std::set<int> open_fds;
    std::map<unsigned long, int> fail;
    std::map<int, off_t> memfd_size;
    std::map<int, int> seals;
    std::vector<unsigned long> calls;
    int next_fd = 40;
    uint64_t heap_len = 0;
    uint32_t closed_handle = 0;

    int take() { open_fds.insert(next_fd); return next_fd++; }
    int open(const char *path, int) override {
        if (!nodes.count(path)) { errno = ENOENT; return -1; }
        return take();
    }
    int close(int fd) override { open_fds.erase(fd); return 0; }
    int memfd_create(const char *, unsigned) override { return take(); }
    int ftruncate(int fd, off_t len) override { memfd_size[fd] = len; return 0; }
    int add_seals(int fd, int s) override { seals[fd] |= s; return 0; }
    int ioctl(int, unsigned long request, void *arg) override {
        calls.push_back(request);
        if (auto it = fail.find(request); it != fail.end() && it->second) { errno = it->second; return -1; }
        if (request == DMA_HEAP_IOCTL_ALLOC) {
            auto *d = static_cast<dma_heap_allocation_data *>(arg);
            heap_len = d->len;
            d->fd = static_cast<__u32>(take());
            return 0;
        }
        if (request == UDMABUF_CREATE) {
            auto *c = static_cast<udmabuf_create *>(arg);
            const int memfd = static_cast<int>(c->memfd);
            // What the kernel's udmabuf_create checks: a sealed memfd, page-aligned, inside it.
            if (!(seals[memfd] & F_SEAL_SHRINK) || c->size % 4096 || static_cast<off_t>(c->size) > memfd_size[memfd]) {
                errno = EINVAL;
                return -1;
            }
            return take();
        }
        if (request == DRM_IOCTL_I915_GEM_CREATE) {
            static_cast<drm_i915_gem_create *>(arg)->handle = 7;
            return 0;
        }
        if (request == DRM_IOCTL_PRIME_HANDLE_TO_FD) {
            static_cast<drm_prime_handle *>(arg)->fd = take();
            return 0;
        }
        if (request == DRM_IOCTL_GEM_CLOSE) closed_handle = static_cast<drm_gem_close *>(arg)->handle;
        return 0;
    }
};

ExporterFn answers(int r, int *calls = nullptr) {
    return [r, calls](uint64_t, int *fd, std::string *) {
        if (calls) ++*calls;
        if (r == 0) *fd = 99;
        return r;
    };
}

}  // namespace

TEST_CASE("alloc: the exporter order and what CLDMABUF_ALLOC_EXPORTER allows") {
    std::vector<E> order;
    std::string why;
    REQUIRE(exporter_order(kAllocAny, nullptr, &order, &why) == CL_SUCCESS);
    CHECK(order == std::vector<E>{E::i915_gem, E::dma_heap, E::udmabuf});
    REQUIRE(exporter_order(kAllocAny, "auto", &order, &why) == CL_SUCCESS);
    CHECK(order.size() == 3);
    REQUIRE(exporter_order(kAllocAny, "dma-heap", &order, &why) == CL_SUCCESS);
    CHECK(order == std::vector<E>{E::dma_heap});
    REQUIRE(exporter_order(static_cast<cl_uint>(E::udmabuf), nullptr, &order, &why) == CL_SUCCESS);
    CHECK(order == std::vector<E>{E::udmabuf});
    REQUIRE(exporter_order(static_cast<cl_uint>(E::i915_gem), "udmabuf", &order, &why) == CL_SUCCESS);
    CHECK(order.empty());
    CHECK(why.find("CLDMABUF_ALLOC_EXPORTER=udmabuf forbids the i915 GEM") != std::string::npos);
    for (cl_uint bad : {0u, 5u, 0x10C0Au}) CHECK(exporter_order(bad, nullptr, &order, &why) == CL_INVALID_PROPERTY);
}

TEST_CASE("alloc: each errno's spec error") {
    for (int e : {ENOENT, ENODEV, ENXIO, ENOSYS, ENOTTY, EACCES, EPERM}) {
        CHECK(exporter_missing(-e));
        CHECK(alloc_error(-e) == CL_INVALID_OPERATION);
    }
    for (int e : {EINVAL, E2BIG, EFBIG, EOVERFLOW}) {
        CHECK(!exporter_missing(-e));
        CHECK(alloc_error(-e) == CL_INVALID_BUFFER_SIZE);
    }
    for (int e : {ENOMEM, ENOSPC, EIO}) CHECK(alloc_error(-e) == CL_MEM_OBJECT_ALLOCATION_FAILURE);
}

TEST_CASE("alloc: missing exporters are skipped, a refusal is remembered, the first that answers wins") {
    const std::vector<E> all = {E::i915_gem, E::dma_heap, E::udmabuf};
    ExporterSet set;
    int heap_calls = 0;
    set.i915_gem = answers(-ENODEV);
    set.dma_heap = answers(-ENOENT, &heap_calls);
    set.udmabuf = answers(0);
    AllocOutcome out = allocate_dmabuf(all, 4096, set);
    CHECK(out.err == CL_SUCCESS);
    CHECK(out.exporter == E::udmabuf);
    CHECK(out.fd == 99);
    CHECK(out.skipped == std::vector<E>{E::i915_gem, E::dma_heap});

    set.i915_gem = answers(0);
    out = allocate_dmabuf(all, 4096, set);
    CHECK(out.exporter == E::i915_gem);
    CHECK(heap_calls == 1);  // not asked once the node answered

    set.i915_gem = answers(-E2BIG);  // there, but the size is refused
    out = allocate_dmabuf(all, 4096, set);
    CHECK(out.exporter == E::udmabuf);
    set.udmabuf = answers(-ENOENT);
    out = allocate_dmabuf(all, 4096, set);
    CHECK(out.err == CL_INVALID_BUFFER_SIZE);
    CHECK(out.fd == -1);
    CHECK(out.why.find("i915 GEM refused") != std::string::npos);
    CHECK(out.why.find("udmabuf not available") != std::string::npos);

    set.i915_gem = answers(-ENODEV);
    out = allocate_dmabuf(all, 4096, set);
    CHECK(out.err == CL_INVALID_OPERATION);
    set.dma_heap = answers(-ENOMEM);
    out = allocate_dmabuf(all, 4096, set);
    CHECK(out.err == CL_MEM_OBJECT_ALLOCATION_FAILURE);

    // One exporter asked for: the others are never called.
    heap_calls = 0;
    set.dma_heap = answers(0, &heap_calls);
    out = allocate_dmabuf({E::udmabuf}, 4096, set);
    CHECK(out.err == CL_INVALID_OPERATION);
    CHECK(heap_calls == 0);
    CHECK(allocate_dmabuf({}, 4096, set).err == CL_INVALID_OPERATION);
}

TEST_CASE("alloc: the system dma-heap over the seam") {
    AllocKernel k;
    unit::ScopedKernel scope(&k);
    int fd = -1;
    CHECK(alloc_from_dma_heap(5000, &fd) == -ENOENT);
    CHECK(k.open_fds.empty());
    k.nodes.insert(kDmaHeapPath);
    REQUIRE(alloc_from_dma_heap(5000, &fd) == 0);
    CHECK(k.heap_len == 8192);
    CHECK(k.open_fds == std::set<int>{fd});  // the heap's fd is closed, the dma-buf is the caller's
    k.close(fd);
    k.fail[DMA_HEAP_IOCTL_ALLOC] = ENOMEM;
    CHECK(alloc_from_dma_heap(4096, &fd) == -ENOMEM);
    CHECK(k.open_fds.empty());
    CHECK(alloc_from_dma_heap(0, &fd) == -EINVAL);
}

TEST_CASE("alloc: udmabuf over a sealed memfd, over the seam") {
    AllocKernel k;
    unit::ScopedKernel scope(&k);
    int fd = -1;
    CHECK(alloc_from_udmabuf(4096, &fd) == -ENOENT);
    CHECK(k.open_fds.empty());
    CHECK(k.next_fd == 40);  // no memfd made without the device
    k.nodes.insert(kUdmabufPath);
    REQUIRE(alloc_from_udmabuf(100, &fd) == 0);
    CHECK(k.open_fds == std::set<int>{fd});  // memfd and device closed
    k.close(fd);
    k.fail[UDMABUF_CREATE] = EFBIG;  // over udmabuf.size_limit_mb
    CHECK(alloc_from_udmabuf(4096, &fd) == -EFBIG);
    CHECK(k.open_fds.empty());
}

TEST_CASE("alloc: i915 GEM_CREATE + PRIME export closes its handle, also when the export fails") {
    AllocKernel k;
    unit::ScopedKernel scope(&k);
    int fd = -1;
    CHECK(alloc_from_i915("/dev/dri/renderD128", 4096, &fd) == -ENOENT);
    k.nodes.insert("/dev/dri/renderD128");
    REQUIRE(alloc_from_i915("/dev/dri/renderD128", 4096, &fd) == 0);
    CHECK(k.closed_handle == 7);
    CHECK(k.open_fds == std::set<int>{fd});  // the node's fd is closed
    k.close(fd);
    k.closed_handle = 0;
    k.fail[DRM_IOCTL_PRIME_HANDLE_TO_FD] = ENOMEM;
    CHECK(alloc_from_i915("/dev/dri/renderD128", 4096, &fd) == -ENOMEM);
    CHECK(k.closed_handle == 7);
    CHECK(k.open_fds.empty());
    k.fail[DRM_IOCTL_I915_GEM_CREATE] = E2BIG;
    k.calls.clear();
    CHECK(alloc_from_i915("/dev/dri/renderD128", 4096, &fd) == -E2BIG);
    CHECK(k.calls == std::vector<unsigned long>{DRM_IOCTL_I915_GEM_CREATE});  // nothing to close
    CHECK(k.open_fds.empty());
}
