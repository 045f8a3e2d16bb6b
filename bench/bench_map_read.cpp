// bench-map-read: how fast a kernel reads an imported dma-buf against a plain
// buffer of the ICD's, per exporter on this machine.  Zero-copy hands the ICD
// the exporter's CPU mapping (CL_MEM_USE_HOST_PTR); where an exporter maps
// write-combined or uncached, a CPU device reading it could be slower than
// the copy route would be.  This measures it instead of guessing.
//
// Per exporter (the system dma-heap, udmabuf, vgem where they exist; the
// virtual Gen9's GEM objects with LD_PRELOAD=libvgen9.so): one dma-buf of
// --mib MiB filled by the CPU, imported once (clCreateBufferWithProperties,
// acquired for the whole run), and a plain clCreateBuffer of the same size
// holding the same bytes.  Round by round, alternating, the same kernel sums
// every 16-byte word of one and then of the other (clFinish each); the CPU's
// own read of the dma-buf's mapping and of malloc'd memory alternate the same
// way, so a slow mapping shows whether or not OpenCL is involved.  Medians,
// min and max of the rounds after two warm-ups.
//
//   bench-map-read [--mib N] [--rounds N] [--csv FILE]
//
// Prints `RATIO map-read/<exporter> = import / plain` (1.0: the import reads
// as fast as the ICD's own buffer) and the route the layer took.  --csv
// appends `exporter,variant,round,gbps` rows (bench/plot-pipelines draws them).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "cl_fixture.hpp"
#include "test_dmabufs.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using cldmabuf::test::DmabufKind;

void check(cl_int err, const char *what) {
    if (err != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(err));
}

struct Spread {
    double median = 0, min = 0, max = 0;
};

Spread spread(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    Spread s;
    if (v.empty()) return s;
    const size_t n = v.size();
    s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    s.min = v.front();
    s.max = v.back();
    return s;
}

const char *kSource = R"CLC(
__kernel void sum16(__global const uint4 *src, ulong n, __global uint *out) {
    const size_t g = get_global_id(0), stride = get_global_size(0);
    uint4 acc = (uint4)(0);
    for (size_t i = g; i < n; i += stride) acc += src[i];
    out[g] = acc.x ^ acc.y ^ acc.z ^ acc.w;
}
)CLC";

constexpr size_t kItems = 16384;

// The exporters this machine has, each with a way to make one dma-buf.
struct Exporter {
    std::string name;
    e2e::Dmabuf (*make)(size_t);
};

std::vector<Exporter> exporters() {
    std::vector<Exporter> list;
    if (cldmabuf::test::available(DmabufKind::dma_heap))
        list.push_back({"heap", [](size_t n) { return cldmabuf::test::allocate(DmabufKind::dma_heap, n); }});
    if (cldmabuf::test::available(DmabufKind::udmabuf))
        list.push_back({"udmabuf", [](size_t n) { return cldmabuf::test::allocate(DmabufKind::udmabuf, n); }});
    if (cldmabuf::test::available(DmabufKind::vgem))
        list.push_back({"vgem", [](size_t n) { return cldmabuf::test::allocate(DmabufKind::vgem, n); }});
    if (e2e::dmabuf_source() == "sim") list.push_back({"sim", [](size_t n) { return e2e::make_dmabuf(n); }});
    return list;
}

const char *route_name(cl_uint r) {
    switch (r) {
        case CL_DMA_BUF_ROUTE_COPY_CLDMABUF: return "copy";
        case CL_DMA_BUF_ROUTE_HOST_PTR_CLDMABUF: return "host-ptr (zero-copy)";
        case CL_DMA_BUF_ROUTE_IMAGE_FROM_BUFFER_CLDMABUF: return "image-from-buffer (zero-copy)";
        default: return "?";
    }
}

// Seconds for one kernel pass over `mem`, to completion.
double kernel_pass(const e2e::ClEnv &env, cl_kernel k, cl_mem mem, cl_ulong words, cl_mem out) {
    check(clSetKernelArg(k, 0, sizeof mem, &mem), "clSetKernelArg");
    check(clSetKernelArg(k, 1, sizeof words, &words), "clSetKernelArg");
    check(clSetKernelArg(k, 2, sizeof out, &out), "clSetKernelArg");
    const size_t global = kItems;
    const auto t0 = Clock::now();
    check(clEnqueueNDRangeKernel(env.queue, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
    check(clFinish(env.queue), "clFinish");
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Seconds for the CPU to read `bytes` at `p` (16-byte words, xor-summed).
double cpu_pass(const void *p, size_t bytes) {
    const auto *w = static_cast<const uint64_t *>(p);
    const auto t0 = Clock::now();
    uint64_t a = 0, b = 0;
    for (size_t i = 0; i + 1 < bytes / 8; i += 2) {
        a += w[i];
        b ^= w[i + 1];
    }
    asm volatile("" ::"r"(a), "r"(b));
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

void bench_one(const e2e::ClEnv &env, cl_kernel k, const Exporter &ex, size_t bytes, int rounds, FILE *csv) {
    e2e::Dmabuf buf = ex.make(bytes);
    void *map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, buf.fd, 0);
    if (map == MAP_FAILED) throw std::runtime_error(ex.name + ": mmap of the dma-buf failed");
    for (size_t i = 0; i < bytes / 4; ++i) static_cast<uint32_t *>(map)[i] = uint32_t(i * 2654435761u);
    std::unique_ptr<uint32_t[]> host(new uint32_t[bytes / 4]);
    std::memcpy(host.get(), map, bytes);

    cl_int err = CL_SUCCESS;
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(buf.dup_fd()),
                                       0};
    cl_mem imp = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_ONLY, bytes, nullptr, &err);
    if (!imp) close(static_cast<int>(props[1]));
    check(err, "clCreateBufferWithProperties(dma-buf)");
    cl_uint route = 99;
    clGetMemObjectInfo(imp, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr);
    cl_mem plain = clCreateBuffer(env.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, host.get(), &err);
    check(err, "clCreateBuffer(plain)");
    cl_mem out = clCreateBuffer(env.context, CL_MEM_WRITE_ONLY, kItems * sizeof(cl_uint), nullptr, &err);
    check(err, "clCreateBuffer(out)");
    check(env.acquire(env.queue, 1, &imp, 0, nullptr, nullptr), "acquire");
    check(clFinish(env.queue), "clFinish");

    const cl_ulong words = bytes / 16;
    const double gb = double(bytes) / 1e9;
    std::vector<double> t_imp, t_plain, t_cpu_map, t_cpu_host;
    for (int r = 0; r < rounds + 2; ++r) {
        const double a = kernel_pass(env, k, imp, words, out);
        const double b = kernel_pass(env, k, plain, words, out);
        const double c = cpu_pass(map, bytes);
        const double d = cpu_pass(host.get(), bytes);
        if (r < 2) continue;  // warm-up: first touch, kernel compile, caches
        t_imp.push_back(gb / a);
        t_plain.push_back(gb / b);
        t_cpu_map.push_back(gb / c);
        t_cpu_host.push_back(gb / d);
        if (csv) {
            std::fprintf(csv, "%s,kernel-import,%d,%.3f\n", ex.name.c_str(), r - 2, gb / a);
            std::fprintf(csv, "%s,kernel-plain,%d,%.3f\n", ex.name.c_str(), r - 2, gb / b);
            std::fprintf(csv, "%s,cpu-mapping,%d,%.3f\n", ex.name.c_str(), r - 2, gb / c);
            std::fprintf(csv, "%s,cpu-malloc,%d,%.3f\n", ex.name.c_str(), r - 2, gb / d);
        }
    }
    check(env.release(env.queue, 1, &imp, 0, nullptr, nullptr), "release");
    check(clFinish(env.queue), "clFinish");
    clReleaseMemObject(out);
    clReleaseMemObject(plain);
    clReleaseMemObject(imp);
    munmap(map, bytes);

    const Spread si = spread(t_imp), sp = spread(t_plain), sm = spread(t_cpu_map), sh = spread(t_cpu_host);
    std::printf("%-8s route %-28s kernel: import %6.2f GB/s [%.2f-%.2f], plain %6.2f GB/s [%.2f-%.2f]; "
                "CPU: mapping %6.2f GB/s, malloc %6.2f GB/s\n",
                ex.name.c_str(), route_name(route), si.median, si.min, si.max, sp.median, sp.min, sp.max, sm.median,
                sh.median);
    std::printf("RATIO map-read/%s = %.2f (kernel reading the import / a plain buffer; < 0.8: the mapping is slow)\n",
                ex.name.c_str(), sp.median > 0 ? si.median / sp.median : 0);
    std::printf("RATIO map-read-cpu/%s = %.2f (CPU reading the dma-buf's mapping / malloc'd memory)\n", ex.name.c_str(),
                sh.median > 0 ? sm.median / sh.median : 0);
}

}  // namespace

int main(int argc, char **argv) {
    size_t mib = 64;
    int rounds = 15;
    const char *csv_path = nullptr;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--mib" && i + 1 < argc) mib = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
        else if (a == "--csv" && i + 1 < argc) csv_path = argv[++i];
        else {
            std::fprintf(stderr, "usage: bench-map-read [--mib N] [--rounds N] [--csv FILE]\n");
            return 2;
        }
    }
    if (mib == 0 || rounds <= 0) {
        std::fprintf(stderr, "bench-map-read: --mib and --rounds must be positive\n");
        return 2;
    }
    try {
        const auto list = exporters();
        if (list.empty()) throw std::runtime_error("no dma-buf exporter here (LD_PRELOAD=libvgen9.so on the host)");
        e2e::ClEnv env;
        if (!env.acquire) throw std::runtime_error("no cl_khr_external_memory (OPENCL_LAYERS=libcldmabuf.so?)");
        cl_kernel k = env.build_kernel(kSource, "sum16");
        FILE *csv = csv_path ? std::fopen(csv_path, "a") : nullptr;
        if (csv_path && !csv) throw std::runtime_error(std::string("cannot open ") + csv_path);
        if (csv && std::ftell(csv) == 0) std::fprintf(csv, "exporter,variant,round,gbps\n");
        std::printf("bench-map-read: %s, %zu MiB, %d rounds alternating import / plain\n", env.platform_name.c_str(),
                    mib, rounds);
        for (const Exporter &ex : list) bench_one(env, k, ex, mib << 20, rounds, csv);
        if (csv) std::fclose(csv);
        clReleaseKernel(k);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench-map-read: %s\n", e.what());
        return 1;
    }
    return 0;
}
