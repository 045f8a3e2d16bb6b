// clCreateBufferWithProperties / clCreateImageWithProperties: the property
// list is classified once (layer/import/request.hpp, in the manner of
// rusticl's util/properties.rs: parse into a value, then match on it), and
// each kind of request goes to the one part of the layer that serves it,
// which never reads the list again:
//
//   not ours         the ICD, with the application's list untouched;
//   refused          the spec's error and one log line;
//   an allocation    layer/alloc (which imports the new dma-buf through layer/import);
//   a dma-buf        layer/import (the ICD's own import where it does them);
//   another handle   the ICD, unless no device concerned lists its type.
#include <variant>

#include "layer/alloc/create.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/core/refuse.hpp"
#include "layer/entry/entry_chains.hpp"
#include "layer/import/buffer.hpp"
#include "layer/import/fresh_handles.hpp"
#include "layer/import/image.hpp"
#include "layer/import/native.hpp"
#include "layer/import/request.hpp"

namespace cldmabuf::chain {
namespace {

// std::visit over one lambda per kind of request.
template <class... Cases>
struct Match : Cases... {
    using Cases::operator()...;
};
template <class... Cases>
Match(Cases...) -> Match<Cases...>;

cl_mem refused(cl_int *errcode_ret, const RefusedRequest &r, const char *import_what) {
    return refuse_import(errcode_ret, r.err, r.allocation ? "allocation" : import_what, r.why);
}

}  // namespace

cl_mem CL_API_CALL create_buffer_with_properties(cl_context context, const cl_mem_properties *properties,
                                                 cl_mem_flags flags, size_t size, void *host_ptr,
                                                 cl_int *errcode_ret) {
    MemRequest request = classify_mem_request(properties, RequestKind::buffer);
    return std::visit(
        Match{
            [&](NotOurs &) {
                return fresh_mem(
                    next().clCreateBufferWithProperties(context, properties, flags, size, host_ptr, errcode_ret));
            },
            [&](RefusedRequest &r) { return refused(errcode_ret, r, "import"); },
            [&](AllocationRequest &a) {
                return create_allocated_buffer(context, a, flags, size, host_ptr, errcode_ret);
            },
            [&](DmabufRequest &d) {
                return import_dmabuf_buffer(context, std::move(d), flags, size, host_ptr, errcode_ret);
            },
            [&](IcdHandleRequest &h) {
                return fresh_mem(icd_handle_buffer(context, h, properties, flags, size, host_ptr, errcode_ret));
            },
        },
        request);
}

cl_mem CL_API_CALL create_image_with_properties(cl_context context, const cl_mem_properties *properties,
                                                cl_mem_flags flags, const cl_image_format *format,
                                                const cl_image_desc *desc, void *host_ptr, cl_int *errcode_ret) {
    MemRequest request = classify_mem_request(properties, RequestKind::image);
    return std::visit(
        Match{
            [&](NotOurs &) {
                return fresh_mem(next().clCreateImageWithProperties(context, properties, flags, format, desc,
                                                                    host_ptr, errcode_ret));
            },
            [&](RefusedRequest &r) { return refused(errcode_ret, r, "image import"); },
            [&](AllocationRequest &a) {
                return create_allocated_image(context, a, flags, format, desc, host_ptr, errcode_ret);
            },
            [&](DmabufRequest &d) {
                return import_dmabuf_image(context, std::move(d), flags, format, desc, host_ptr, errcode_ret);
            },
            [&](IcdHandleRequest &h) {
                return fresh_mem(
                    icd_handle_image(context, h, properties, flags, format, desc, host_ptr, errcode_ret));
            },
        },
        request);
}

}  // namespace cldmabuf::chain
