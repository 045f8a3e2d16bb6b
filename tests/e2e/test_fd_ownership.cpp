// Who owns the fd (docs/layer-rules.md): the layer works on its own duplicate
// from the moment of import, closes the application's number at destroy only
// while it still names the imported dma-buf, and never closes a
// clImportMemoryARM caller's fd.  Also the read-only mapping of a
// CL_MEM_READ_ONLY import.  Tagged [fd].
#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <linux/ioctl.h>  // _IOWR behind the DMA_BUF_IOCTL_* numbers (issue #29)
#include <linux/dma-buf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "cl_fixture.hpp"
#include "destroy_mem.hpp"
#include "device_sum.hpp"
#include "dmabuf_view.hpp"
#include "image_desc.hpp"
#include "layer_probe.hpp"
#include "test_dmabufs.hpp"

using namespace e2e;

namespace {

const char *inc_source = "kernel void inc(global uint *b) { size_t i = get_global_id(0); b[i] += 1; }";

cl_mem import_fd(const ClEnv &env, int fd, size_t size, cl_mem_flags flags = CL_MEM_READ_WRITE) {
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd), 0};
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBufferWithProperties(env.context, props, flags, size, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(mem);
    return mem;
}

void inc_in_place(const ClEnv &env, cl_kernel k, cl_mem mem, size_t n) {
    REQUIRE(env.acquire(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clSetKernelArg(k, 0, sizeof mem, &mem) == CL_SUCCESS);
    REQUIRE(clEnqueueNDRangeKernel(env.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(env.release(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
}

std::pair<dev_t, ino_t> identity(int fd) {
    struct stat st {};
    REQUIRE(fstat(fd, &st) == 0);
    return {st.st_dev, st.st_ino};
}

// Open fds of this process on the dma-buf with inode `ino`.
int fds_of(ino_t ino) {
    int n = 0;
    for (int fd = 0; fd < 1024; ++fd) {
        struct stat st {};
        n += fstat(fd, &st) == 0 && st.st_ino == ino;
    }
    return n;
}

// The protection ("rw-s", "r--s") of each mapping of `ino` in /proc/self/maps.
std::vector<std::string> mapping_perms(ino_t ino) {
    std::ifstream maps("/proc/self/maps");
    std::vector<std::string> perms;
    std::string line;
    while (std::getline(maps, line)) {
        std::istringstream f(line);
        std::string range, p, offset, dev;
        unsigned long long i = 0;
        f >> range >> p >> offset >> dev >> i;
        if (i == static_cast<unsigned long long>(ino)) perms.push_back(p);
    }
    return perms;
}

}  // namespace

TEST_CASE("fd ownership: the application closes its fd right after import; acquire, kernels, release and copies "
          "still reach the right buffers", "[kernel][fd]") {
    REQUIRE_DMABUF();
    ClEnv env;
    const size_t n = 4096, size = n * 4;
    Dmabuf a = make_dmabuf(size), b = make_dmabuf(size);
    DmabufView va(a.dup_fd(), size), vb(b.dup_fd(), size);
    va.fill_words(100, n);
    vb.fill_words(0, n);
    cl_mem ma = import_fd(env, a.fd, size), mb = import_fd(env, b.fd, size);
    // FFmpeg-style: the frame's fds go as soon as the import is made.
    REQUIRE(close(a.release_fd()) == 0);
    REQUIRE(close(b.release_fd()) == 0);
    // Another dma-buf now likely sits at those numbers: the layer must not care.
    Dmabuf other = make_dmabuf(size);
    DmabufView vo(other.dup_fd(), size);
    vo.fill_words(7, n);

    cl_kernel k = env.build_kernel(inc_source, "inc");
    va.fill_words(1000, n);  // after the import: in place, or copied on acquire
    inc_in_place(env, k, ma, n);
    CHECK(va.has_words(1001, n));
    CHECK(vo.has_words(7, n));

    // A copy between the two imports (the blitter on the virtual Gen9, which
    // imports the layer's own duplicates, else the ICD).
    cl_mem both[] = {ma, mb};
    REQUIRE(env.acquire(env.queue, 2, both, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clEnqueueCopyBuffer(env.queue, ma, mb, 0, 0, size, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(env.release(env.queue, 2, both, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(vb.has_words(1001, n));
    CHECK(vo.has_words(7, n));

    clReleaseKernel(k);
    destroy(env, ma);
    destroy(env, mb);
    CHECK(fd_is_open(other.fd));  // whatever numbers it took, nothing of it was closed
    CHECK(vo.has_words(7, n));
}

TEST_CASE("fd ownership: a number the application closed and reused for another file is left open at destroy",
          "[fd]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = make_dmabuf(8192);
    const int fd = buf.release_fd();
    cl_mem mem = import_fd(env, fd, 8192);
    REQUIRE(close(fd) == 0);
    // Another file at the same number. Opened until the kernel hands out that
    // number (it gives the lowest free one) rather than dup3 onto it: the
    // mapping cache's reaper and the ICD's threads open files of their own,
    // and dup3 onto a number another thread is installing fails with EBUSY
    // (or, a moment later, would close that thread's file).
    std::vector<int> spares;
    bool got = false;
    for (int i = 0; i < 256 && !got; ++i) {
        const int o = open("/dev/null", O_RDONLY | O_CLOEXEC);
        REQUIRE(o >= 0);
        if (o == fd) {
            got = true;
        } else {
            spares.push_back(o);  // held, so the next open takes the next lowest free number
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    for (const int o : spares) close(o);
    REQUIRE(got);
    const auto before = identity(fd);
    destroy(env, mem);
    REQUIRE(fd_is_open(fd));
    CHECK(identity(fd) == before);
    close(fd);
}

TEST_CASE("fd ownership: an fd the application keeps is closed at destroy (the implementation owns it), with the "
          "layer's duplicate", "[fd]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = make_dmabuf(8192);
    DmabufView view(buf.dup_fd(), 8192);  // keeps the dma-buf alive (an exporter may hold fds of its own)
    const int fd = buf.release_fd();
    const ino_t ino = identity(fd).second;
    const int fds_before = fds_of(ino);
    // The mapping cache holds an fd of each mapping it may park, from the
    // import on (layer/dmabuf/mapping_cache.hpp).
    const int cached = cache_fds_per_import();
    cl_mem mem = import_fd(env, fd, 8192);
    CHECK(fds_of(ino) == fds_before + 1 + cached);  // the layer's duplicate (and the cache's)
    destroy(env, mem);
    for (int i = 0; i < 200 && fd_is_open(fd); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK_FALSE(fd_is_open(fd));
    // The application's fd and the layer's duplicate are gone; a parked
    // mapping keeps the cache's (the view still holds the dma-buf).
    CHECK(fds_of(ino) == fds_before - 1 + cached);
}

TEST_CASE("fd ownership: a refused import keeps no duplicate and leaves the application's fd open", "[fd]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = make_dmabuf(8192);
    const int fds_before = settled_fds();
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(buf.fd),
                                       0};
    cl_int err = CL_SUCCESS;
    // Host pointer flags are refused before the dup; a size past the end too.
    CHECK(clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, 3 * 8192, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_BUFFER_SIZE);
    CHECK(fd_is_open(buf.fd));
    CHECK(open_fds_toward(fds_before) == fds_before);
    // Refused by the ICD, after the layer made its duplicate and mapping.
    CHECK(clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE | CL_MEM_READ_ONLY, 8192, nullptr,
                                       &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    CHECK(fd_is_open(buf.fd));
    CHECK(open_fds_toward(fds_before) == fds_before);
}

TEST_CASE("fd ownership: clImportMemoryARM never closes the caller's fd, used or closed after the import", "[kernel][fd]") {
    REQUIRE_DMABUF();
    ClEnv env;
    if (!layer_imports_in_place())
        SKIP("cl_arm_import_memory never copies: refused where the layer copies (forced, or a discrete device)");
    using ImportFn = cl_mem(CL_API_CALL *)(cl_context, cl_mem_flags, const cl_import_properties_arm *, void *,
                                           size_t, cl_int *);
    auto import = reinterpret_cast<ImportFn>(
        clGetExtensionFunctionAddressForPlatform(env.platform, "clImportMemoryARM"));
    REQUIRE(import);
    const cl_import_properties_arm props[] = {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM, 0};
    const size_t n = 1024, size = n * 4;
    Dmabuf keep = make_dmabuf(size), drop = make_dmabuf(size);
    DmabufView vk(keep.dup_fd(), size), vd(drop.dup_fd(), size);
    vk.fill_words(10, n);
    vd.fill_words(20, n);
    cl_int err = CL_SUCCESS;
    int fd_keep = keep.fd, fd_drop = drop.fd;
    cl_mem mk = import(env.context, CL_MEM_READ_WRITE, props, &fd_keep, size, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem md = import(env.context, CL_MEM_READ_WRITE, props, &fd_drop, size, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(close(drop.release_fd()) == 0);

    cl_kernel k = env.build_kernel(inc_source, "inc");
    inc_in_place(env, k, mk, n);
    inc_in_place(env, k, md, n);
    CHECK(vk.has_words(11, n));
    CHECK(vd.has_words(21, n));
    clReleaseKernel(k);
    const auto before = identity(keep.fd);
    destroy(env, mk);
    destroy(env, md);
    REQUIRE(fd_is_open(keep.fd));
    CHECK(identity(keep.fd) == before);
}

TEST_CASE("fd ownership: an image import keeps working after the application closed its fd", "[kernel][fd]") {
    REQUIRE_DMABUF();
    ClEnv env;
    if (!device_has_images(env)) SKIP("no image support");
    const size_t w = 64, h = 16, pitch = w * 4;
    Dmabuf buf = make_dmabuf(pitch * h);
    DmabufView view(buf.dup_fd(), pitch * h);
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(buf.fd),
                                       0};
    const cl_image_format format{CL_RGBA, CL_UNSIGNED_INT8};
    const cl_image_desc desc = cldmabuf::test::image2d_desc(w, h, pitch);
    cl_int err = CL_SUCCESS;
    cl_mem image = clCreateImageWithProperties(env.context, props, CL_MEM_READ_ONLY, &format, &desc, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(close(buf.release_fd()) == 0);
    view.fill_words(0x01020304, w * h);

    std::vector<uint32_t> got(w * h);
    const size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
    REQUIRE(env.acquire(env.queue, 1, &image, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clEnqueueReadImage(env.queue, image, CL_TRUE, origin, region, 0, 0, got.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    REQUIRE(env.release(env.queue, 1, &image, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    bool same = true;
    for (size_t i = 0; i < w * h && same; ++i) same = got[i] == 0x01020304u + static_cast<uint32_t>(i);
    CHECK(same);
    destroy(env, image);
}

TEST_CASE("a CL_MEM_READ_ONLY import is mapped read-only, and kernels still read it", "[kernel][fd]") {
    REQUIRE_DMABUF();
    ClEnv env;
    const size_t n = 2048, size = n * 4;
    Dmabuf buf = make_dmabuf(size);
    DmabufView view(buf.dup_fd(), size);
    view.fill_words(5, n);
    const ino_t ino = identity(buf.fd).second;
    const auto perms_before = mapping_perms(ino);
    cl_mem mem = import_fd(env, buf.release_fd(), size, CL_MEM_READ_ONLY);
    auto perms = mapping_perms(ino);
    int rw = 0, ro = 0;
    for (const auto &p : perms) (p[1] == 'w' ? rw : ro)++;
    for (const auto &p : perms_before) (p[1] == 'w' ? rw : ro)--;
    CHECK(rw == 0);  // no writable mapping was added for it
    CHECK(ro == 1);  // the layer's own, read-only (a device copy maps it too, to fill on acquire)

    // A kernel sums what it reads (its result buffer is the copy source below).
    cl_mem out = nullptr;
    CHECK(device_sum(env, mem, n, &out) == 5ull * n + (n - 1) * n / 2);
    CHECK(view.has_words(5, n));

    // Host-enqueued writes would make the ICD write the read-only mapping:
    // refused while the import is used in place; a device copy takes them.
    const bool in_place = route_of(mem) != CL_DMA_BUF_ROUTE_COPY_CLDMABUF;
    const cl_int want = in_place ? CL_INVALID_OPERATION : CL_SUCCESS;
    std::vector<uint32_t> words(n, 9);
    CHECK(clEnqueueWriteBuffer(env.queue, mem, CL_TRUE, 0, 64, words.data(), 0, nullptr, nullptr) == want);
    const cl_uint pattern = 1;
    CHECK(clEnqueueFillBuffer(env.queue, mem, &pattern, 4, 0, 64, 0, nullptr, nullptr) == want);
    CHECK(clEnqueueCopyBuffer(env.queue, out, mem, 0, 0, sizeof(cl_ulong), 0, nullptr, nullptr) == want);
    cl_int map_err = CL_SUCCESS;
    void *p = clEnqueueMapBuffer(env.queue, mem, CL_TRUE, CL_MAP_WRITE, 0, 64, 0, nullptr, nullptr, &map_err);
    CHECK(map_err == want);
    if (p) REQUIRE(clEnqueueUnmapMemObject(env.queue, mem, p, 0, nullptr, nullptr) == CL_SUCCESS);
    // Reading stays allowed.
    p = clEnqueueMapBuffer(env.queue, mem, CL_TRUE, CL_MAP_READ, 0, 64, 0, nullptr, nullptr, &map_err);
    REQUIRE(map_err == CL_SUCCESS);
    REQUIRE(p);
    CHECK(static_cast<const uint32_t *>(p)[1] == (in_place ? 6u : static_cast<const uint32_t *>(p)[1]));
    REQUIRE(clEnqueueUnmapMemObject(env.queue, mem, p, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(view.has_words(5, n));  // the dma-buf itself was never written
    clReleaseMemObject(out);
    destroy(env, mem);
}
