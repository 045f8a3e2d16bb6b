// clReleaseContext: the record of the devices a context was created with
// (layer/core/context_devices.hpp; made by the creation chain in
// entry_chains_interop.cpp) goes with the context's last release.
#include "layer/entry/entry_chains.hpp"

#include "layer/core/dispatch.hpp"
#include "layer/core/context_devices.hpp"

namespace cldmabuf::chain {

cl_int CL_API_CALL release_context(cl_context context) {
    // The last release frees the context and its address may be handed out
    // again; a reference the ICD or the layer holds keeps the record (it is
    // replaced when a new context takes the address, see above).
    cl_uint refs = 0;
    const bool last = next().clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, nullptr) ==
                          CL_SUCCESS &&
                      refs == 1;
    const cl_int err = next().clReleaseContext(context);
    if (err == CL_SUCCESS && last) forget_context_devices(context);
    return err;
}

}  // namespace cldmabuf::chain
