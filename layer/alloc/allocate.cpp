#include "layer/alloc/allocate.hpp"

#include <cerrno>
#include <cstring>

#include "layer/alloc/exporters.hpp"
#include "layer/blit/device_pairing.hpp"
#include "layer/i915/blt_engine.hpp"

namespace cldmabuf {

AllocOutcome allocate_dmabuf(const std::vector<AllocExporter> &order, uint64_t bytes, const ExporterSet &set) {
    AllocOutcome out;
    cl_int refusal = CL_SUCCESS;
    for (AllocExporter e : order) {
        const ExporterFn &fn = e == AllocExporter::i915_gem ? set.i915_gem
                               : e == AllocExporter::dma_heap ? set.dma_heap
                                                              : set.udmabuf;
        int fd = -1;
        std::string reason;
        const int r = fn ? fn(bytes, &fd, &reason) : -ENODEV;
        if (r == 0) {
            out.err = CL_SUCCESS;
            out.fd = fd;
            out.exporter = e;
            out.why.clear();
            return out;
        }
        out.skipped.push_back(e);
        if (reason.empty()) reason = std::strerror(-r);
        if (!out.why.empty()) out.why += "; ";
        out.why += std::string(alloc_exporter_name(e)) + (exporter_missing(r) ? " not available: " : " refused: ") +
                   reason;
        if (!exporter_missing(r) && refusal == CL_SUCCESS) refusal = alloc_error(r);
    }
    out.err = refusal != CL_SUCCESS ? refusal : CL_INVALID_OPERATION;
    if (order.empty()) out.why = "no exporter allowed";
    return out;
}

ExporterSet system_exporters(const std::vector<cl_device_id> &devices) {
    ExporterSet set;
    set.i915_gem = [devices](uint64_t bytes, int *fd, std::string *why) -> int {
        i915::BltEngine *engine = i915::BltEngine::instance();
        if (!engine) {
            *why = "no Gen9 i915 render node (or CLDMABUF_BLT=off)";
            return -ENODEV;
        }
        for (cl_device_id device : devices) {
            if (const char *mismatch = blt_device_mismatch(device)) {
                *why = std::string("the node does not serve a device of the context: ") + mismatch;
                return -ENODEV;
            }
        }
        const int r = alloc_from_i915(engine->device_info().path, bytes, fd);
        if (r != 0) *why = engine->device_info().path + ": " + std::strerror(-r);
        return r;
    };
    set.dma_heap = [](uint64_t bytes, int *fd, std::string *why) -> int {
        const int r = alloc_from_dma_heap(bytes, fd);
        if (r != 0) *why = std::string(kDmaHeapPath) + ": " + std::strerror(-r);
        return r;
    };
    set.udmabuf = [](uint64_t bytes, int *fd, std::string *why) -> int {
        const int r = alloc_from_udmabuf(bytes, fd);
        if (r != 0) *why = std::string(kUdmabufPath) + ": " + std::strerror(-r);
        return r;
    };
    return set;
}

}  // namespace cldmabuf
