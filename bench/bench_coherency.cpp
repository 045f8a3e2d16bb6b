// The contract's coherency measurement, reproduced (issue #17, docs/allocator.md):
// the same pipeline run with the handoff, without its CPU-side sync, and
// without either, `--runs` times per case, printing each case's stale-read
// rate.  Pipeline: two layer-allocated dma-bufs (CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF),
// the CPU writes a new value into the source, clEnqueueCopyBuffer copies it
// (the Gen9 blitter where the layer takes it), the CPU reads the destination.
// A run is stale when any element of the destination is not the new value.
//
//   handoff         acquire, map/unmap for the write, copy, release, the read
//                   under a blocking clEnqueueMapBuffer (fence wait + SYNC)
//   no-cpu-sync     the same commands, but the CPU reads through its own
//                   mapping of the exported fd right after clFlush (no wait,
//                   no DMA_BUF_IOCTL_SYNC)
//   neither         no acquire/release and no map: raw write, copy, clFlush,
//                   raw read
//   after-submit    (virtual Gen9 with the blitter only) as no-cpu-sync, but
//                   the raw read waits until the copy's batch was accepted by
//                   the device: what is stale then is stale because of the
//                   device's asynchronous completion alone, not because the
//                   layer's worker had not submitted the copy yet
//
// On the virtual Gen9 (LD_PRELOAD=libvgen9.so) batches complete `--delay-ms`
// after submission (asynchronous completion, vgen9_set_delay_ms), as a real
// blitter does.  The handoff must read 0 % stale (exit 1 otherwise); on the
// virtual Gen9 the read after submission must show stale reads, or the
// model's asynchronous completion is not faithful enough (exit 2).  Not a test: a measurement (bench/).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "CL/cl_ext_cldmabuf.h"
#include "cl_fixture.hpp"
#include "vgen9_control.hpp"

namespace {

void check(cl_int err, const char *what) {
    if (err != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(err));
}

struct Allocated {
    cl_mem mem = nullptr;
    uint32_t *raw = nullptr;  // the CPU's own mapping of the exported fd
    size_t bytes = 0;
    cl_uint exporter = 0;

    Allocated(const e2e::ClEnv &env, size_t size) : bytes(size) {
        const cl_mem_properties props[] = {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, CL_DMA_BUF_EXPORTER_ANY_CLDMABUF, 0};
        cl_int err = CL_SUCCESS;
        mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, size, nullptr, &err);
        check(err, "clCreateBufferWithProperties(CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF)");
        check(clGetMemObjectInfo(mem, CL_MEM_DMA_BUF_EXPORTER_CLDMABUF, sizeof exporter, &exporter, nullptr),
              "CL_MEM_DMA_BUF_EXPORTER_CLDMABUF");
        cl_int fd = -1;
        check(clGetMemObjectInfo(mem, CL_MEM_DMA_BUF_FD_CLDMABUF, sizeof fd, &fd, nullptr), "CL_MEM_DMA_BUF_FD_CLDMABUF");
        void *m = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (m == MAP_FAILED) throw std::runtime_error("mmap of the exported fd failed");
        raw = static_cast<uint32_t *>(m);
    }
    ~Allocated() {
        if (raw) munmap(raw, bytes);
        if (mem) clReleaseMemObject(mem);
    }
};

enum class Case { handoff, no_cpu_sync, neither, after_submit };

bool all_equal(const uint32_t *p, size_t n, uint32_t v) {
    for (size_t i = 0; i < n; ++i)
        if (p[i] != v) return false;
    return true;
}

// One run; true when the read was stale.
bool run_once(const e2e::ClEnv &env, Case c, Allocated &src, Allocated &dst, uint32_t value) {
    const size_t n = src.bytes / sizeof(uint32_t);
    cl_mem both[] = {src.mem, dst.mem};
    cl_int err = CL_SUCCESS;
    if (c != Case::neither) {
        check(env.acquire(env.queue, 2, both, 0, nullptr, nullptr), "acquire");
        auto *p = static_cast<uint32_t *>(clEnqueueMapBuffer(env.queue, src.mem, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION,
                                                             0, src.bytes, 0, nullptr, nullptr, &err));
        check(err, "clEnqueueMapBuffer(src)");
        for (size_t i = 0; i < n; ++i) p[i] = value;
        check(clEnqueueUnmapMemObject(env.queue, src.mem, p, 0, nullptr, nullptr), "unmap(src)");
    } else {
        for (size_t i = 0; i < n; ++i) src.raw[i] = value;
    }
    const auto &sim = cldmabuf::test::vgen9();
    const uint64_t submitted = sim.loaded ? sim.submitted() : 0;
    check(clEnqueueCopyBuffer(env.queue, src.mem, dst.mem, 0, 0, src.bytes, 0, nullptr, nullptr), "clEnqueueCopyBuffer");
    if (c != Case::neither) check(env.release(env.queue, 2, both, 0, nullptr, nullptr), "release");
    bool stale;
    if (c == Case::handoff) {
        auto *p = static_cast<uint32_t *>(
            clEnqueueMapBuffer(env.queue, dst.mem, CL_TRUE, CL_MAP_READ, 0, dst.bytes, 0, nullptr, nullptr, &err));
        check(err, "clEnqueueMapBuffer(dst)");
        stale = !all_equal(p, n, value);
        check(clEnqueueUnmapMemObject(env.queue, dst.mem, p, 0, nullptr, nullptr), "unmap(dst)");
    } else {
        check(clFlush(env.queue), "clFlush");
        if (c == Case::after_submit && !sim.wait_for_submission(submitted, 2000))
            throw std::runtime_error("the copy's batch was not submitted within 2 s");
        stale = !all_equal(dst.raw, n, value);
    }
    check(clFinish(env.queue), "clFinish");  // settle before the next run
    return stale;
}

const char *exporter_name(cl_uint e) {
    switch (e) {
    case CL_DMA_BUF_EXPORTER_I915_GEM_CLDMABUF: return "i915 GEM";
    case CL_DMA_BUF_EXPORTER_DMA_HEAP_CLDMABUF: return "system dma-heap";
    case CL_DMA_BUF_EXPORTER_UDMABUF_CLDMABUF: return "udmabuf";
    default: return "?";
    }
}

cl_ulong blitter_copies(cl_platform_id platform) {
    cl_ulong stats[CL_STATS_COUNT_CLDMABUF] = {};
    clGetPlatformInfo(platform, CL_PLATFORM_STATS_CLDMABUF, sizeof stats, stats, nullptr);
    return stats[CL_STATS_BLT_COPIES_CLDMABUF];
}

}  // namespace

int main(int argc, char **argv) {
    int runs = 100;
    unsigned delay_ms = 2;
    size_t bytes = 1024 * sizeof(uint32_t);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--runs")) runs = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--delay-ms")) delay_ms = static_cast<unsigned>(std::atoi(argv[i + 1]));
        else if (!std::strcmp(argv[i], "--bytes")) bytes = static_cast<size_t>(std::atoll(argv[i + 1])) & ~size_t{3};
        else {
            std::fprintf(stderr, "usage: bench-coherency [--runs N] [--delay-ms MS] [--bytes B]\n");
            return 64;
        }
    }
    try {
        e2e::ClEnv env;
        if (!env.acquire || !env.release) throw std::runtime_error("acquire/release entry points missing (no layer?)");
        const auto &sim = cldmabuf::test::vgen9();
        if (sim.loaded) sim.set_delay_ms(delay_ms);
        Allocated src(env, bytes), dst(env, bytes);
        const cl_ulong blits0 = blitter_copies(env.platform);
        struct Row {
            Case c;
            const char *name;
            int stale = 0;
        } rows[] = {{Case::handoff, "handoff", 0},
                    {Case::no_cpu_sync, "no-cpu-sync", 0},
                    {Case::neither, "neither", 0},
                    {Case::after_submit, "after-submit", 0}};
        uint32_t value = 0x5EED0000u;
        for (int k = 0; k < 3; ++k)
            for (int r = 0; r < runs; ++r) rows[k].stale += run_once(env, rows[k].c, src, dst, ++value);
        const bool blitter = blitter_copies(env.platform) > blits0;
        const int cases = sim.loaded && blitter ? 4 : 3;
        for (int r = 0; cases == 4 && r < runs; ++r) rows[3].stale += run_once(env, rows[3].c, src, dst, ++value);
        std::printf("coherency: %d runs per case, %zu bytes, allocated by the %s exporter, copied by %s, %s\n", runs,
                    bytes, exporter_name(src.exporter), blitter ? "the Gen9 blitter" : "the ICD",
                    sim.loaded ? ("virtual Gen9 completion delay " + std::to_string(delay_ms) + " ms").c_str()
                               : "no virtual Gen9");
        for (int k = 0; k < cases; ++k)
            std::printf("coherency: %-12s %3d/%d stale (%.1f %%)\n", rows[k].name, rows[k].stale, runs,
                        runs ? 100.0 * rows[k].stale / runs : 0.0);
        if (sim.loaded) sim.set_delay_ms(0);
        if (rows[0].stale) {
            std::printf("coherency: FAIL: the handoff read stale data\n");
            return 1;
        }
        if (sim.loaded && blitter && delay_ms > 0 && rows[3].stale == 0) {
            std::printf("coherency: FAIL: no stale read without the handoff: the virtual Gen9 is not faithful\n");
            return 2;
        }
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench-coherency: %s\n", e.what());
        return 3;
    }
}
