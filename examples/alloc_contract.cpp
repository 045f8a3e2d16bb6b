// The Gen9 contract in OpenCL terms: "one allocation, one handoff, one
// completion".  The application asks the layer for memory the CPU and the
// GPU both reach (CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF: a dma-buf from the i915
// node, the system dma-heap or udmabuf), fills one buffer on the CPU under
// map/unmap, copies it with clEnqueueCopyBuffer (the Gen9 blitter where the
// layer takes it), waits on the copy's event and checks 1024 elements.  It
// never touches a dma-buf import, a softpin address or a sync ioctl: the
// layer does (docs/allocator.md).
//
// Run: OPENCL_LAYERS=.../libcldmabuf.so alloc-contract
// (scripts/demo runs it on the virtual Gen9; the VM lane on the dma-heap).
// Exit status 0 when all 1024 elements are correct.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "CL/cl_ext_cldmabuf.h"

#define CHECK(call)                                                         \
    do {                                                                    \
        cl_int e_ = (call);                                                 \
        if (e_ != CL_SUCCESS) {                                             \
            std::fprintf(stderr, "contract: %s failed: %d\n", #call, e_);   \
            std::exit(1);                                                   \
        }                                                                   \
    } while (0)

namespace {

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
    if (clGetPlatformInfo(platform, CL_PLATFORM_STATS_CLDMABUF, sizeof stats, stats, nullptr) != CL_SUCCESS) return 0;
    return stats[CL_STATS_BLT_COPIES_CLDMABUF];
}

}  // namespace

int main() {
    constexpr size_t n = 1024, bytes = n * sizeof(uint32_t);
    cl_platform_id platform = nullptr;
    CHECK(clGetPlatformIDs(1, &platform, nullptr));
    cl_device_id device = nullptr;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr));
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    CHECK(err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
    CHECK(err);

    // One allocation (each): the layer chooses the exporter.
    const cl_mem_properties props[] = {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, CL_DMA_BUF_EXPORTER_ANY_CLDMABUF, 0};
    cl_mem src = clCreateBufferWithProperties(context, props, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    if (!src) {
        std::fprintf(stderr, "contract: the layer allocated no dma-buf (error %d; is OPENCL_LAYERS set, and is "
                             "there an exporter? CLDMABUF_LOG=info says why)\n", err);
        return 1;
    }
    cl_mem dst = clCreateBufferWithProperties(context, props, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    CHECK(err);
    cl_uint exporter = 0;
    CHECK(clGetMemObjectInfo(src, CL_MEM_DMA_BUF_EXPORTER_CLDMABUF, sizeof exporter, &exporter, nullptr));
    const cl_ulong blits_before = blitter_copies(platform);

    // One handoff: the CPU's access is bracketed by map/unmap.
    auto *in = static_cast<uint32_t *>(clEnqueueMapBuffer(queue, src, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0,
                                                          bytes, 0, nullptr, nullptr, &err));
    CHECK(err);
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint32_t>(0xC0DE0000u + i);
    CHECK(clEnqueueUnmapMemObject(queue, src, in, 0, nullptr, nullptr));

    // One completion: the copy's event.
    cl_event done = nullptr;
    CHECK(clEnqueueCopyBuffer(queue, src, dst, 0, 0, bytes, 0, nullptr, &done));
    CHECK(clWaitForEvents(1, &done));
    CHECK(clReleaseEvent(done));

    auto *out = static_cast<uint32_t *>(
        clEnqueueMapBuffer(queue, dst, CL_TRUE, CL_MAP_READ, 0, bytes, 0, nullptr, nullptr, &err));
    CHECK(err);
    size_t correct = 0;
    for (size_t i = 0; i < n; ++i) correct += out[i] == static_cast<uint32_t>(0xC0DE0000u + i);
    CHECK(clEnqueueUnmapMemObject(queue, dst, out, 0, nullptr, nullptr));
    CHECK(clFinish(queue));
    const bool blitter = blitter_copies(platform) > blits_before;

    std::printf("contract: %zu/%zu correct (allocated by the %s exporter, copied by %s)\n", correct, n,
                exporter_name(exporter), blitter ? "the Gen9 blitter" : "the ICD");
    clReleaseMemObject(src);
    clReleaseMemObject(dst);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return correct == n ? 0 : 1;
}
