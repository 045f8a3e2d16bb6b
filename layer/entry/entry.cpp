// The four exported entry points of cl_loader_layers 1.0.1
// (OpenCL-Docs extensions/cl_loader_layers.asciidoc).  ocl-icd 2.3.1 calls
// only clGetLayerInfo + clInitLayer; the Khronos loader since v2026.05.29
// calls clInitLayerWithProperties and, at unload, clDeinitLayer.  A layer
// initialised with properties must not use atexit, so teardown work lives
// in clDeinitLayer and the legacy path registers it with atexit itself.
#include <cstdlib>
#include <cstring>

#include "layer/base/cl_compat.h"
#include "layer/core/dispatch.hpp"
#include "layer/base/log.hpp"
#include "layer/base/settings.hpp"
#include "layer/base/stats.hpp"
#include "layer/sync/dmabuf_bridge.hpp"
#include "layer/core/worker.hpp"

#define CLDMABUF_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr char layer_name[] = "cldmabuf: cl_khr_external_memory_dma_buf for any OpenCL implementation";

// entry names the loader's call in the log: the VM lane checks which of the
// two init paths a loader took (ocl-icd: clInitLayer; Khronos: WithProperties).
cl_int init_common(const char *entry, cl_uint num_entries, const cl_icd_dispatch *target_dispatch,
                   cl_uint *num_entries_out, const cl_icd_dispatch **layer_dispatch_ret) {
    cldmabuf::validate_settings();  // every refused setting is logged now, not at its first use
    if (!target_dispatch || !layer_dispatch_ret || !num_entries_out) return CL_INVALID_VALUE;
    *layer_dispatch_ret = cldmabuf::init_dispatch(target_dispatch, num_entries);
    *num_entries_out = sizeof(cl_icd_dispatch) / sizeof(void *);
    LOG_INFO("layer initialised by %s (%u dispatch entries from the loader)", entry, num_entries);
    return CL_SUCCESS;
}

void teardown() {
    cldmabuf::print_stats_if_enabled();
    cldmabuf::shutdown_worker();
    // After the workers drained their steps: release fences of steps that never ran.
    cldmabuf::sync::signal_all_dmabuf_signals();
}

}  // namespace

CLDMABUF_EXPORT cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param_name, size_t param_value_size,
                                                  void *param_value, size_t *param_value_size_ret) {
    const void *src = nullptr;
    size_t size = 0;
    cl_layer_api_version version = CL_LAYER_API_VERSION_100;
    switch (param_name) {
    case CL_LAYER_API_VERSION:
        src = &version;
        size = sizeof version;
        break;
    case CL_LAYER_NAME:
        src = layer_name;
        size = sizeof layer_name;
        break;
    default:
        return CL_INVALID_VALUE;
    }
    if (param_value) {
        if (param_value_size < size) return CL_INVALID_VALUE;
        std::memcpy(param_value, src, size);
    }
    if (param_value_size_ret) *param_value_size_ret = size;
    return CL_SUCCESS;
}

CLDMABUF_EXPORT cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch *target_dispatch,
                                               cl_uint *num_entries_out,
                                               const cl_icd_dispatch **layer_dispatch_ret) {
    cl_int err = init_common("clInitLayer", num_entries, target_dispatch, num_entries_out, layer_dispatch_ret);
    if (err == CL_SUCCESS) std::atexit(teardown);  // legacy loaders never call clDeinitLayer
    return err;
}

CLDMABUF_EXPORT cl_int CL_API_CALL clInitLayerWithProperties(cl_uint num_entries,
                                                             const cl_icd_dispatch *target_dispatch,
                                                             cl_uint *num_entries_out,
                                                             const cl_icd_dispatch **layer_dispatch_ret,
                                                             const cl_layer_properties *properties) {
    // No properties are defined by cl_loader_layers 1.0.1; any non-empty list is an error.
    if (properties && properties[0] != CL_LAYER_PROPERTIES_LIST_END) return CL_INVALID_PROPERTY;
    return init_common("clInitLayerWithProperties", num_entries, target_dispatch, num_entries_out,
                       layer_dispatch_ret);
}

CLDMABUF_EXPORT cl_int CL_API_CALL clDeinitLayer(void) {
    LOG_DEBUG("clDeinitLayer: the loader unloads the layer");
    teardown();
    return CL_SUCCESS;
}
