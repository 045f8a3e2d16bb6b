// EGLImage import: clCreateFromEGLImageKHR (egl_image_import.cpp), and the
// path every EGLImage takes to become a 2D cl image, the layer's own images
// of GL textures and renderbuffers too (gl_objects.cpp): exported as a
// dma-buf (eglExportDMABUFImageMESA, dmabuf_export.hpp) and imported by the
// layer's image import (layer/import/image.hpp), like any other dma-buf.  A
// tiled export is imported through a linear copy (linear_copy.hpp), with the
// caller's consent.  Also how the EGL and GL creation calls refuse.
#pragma once

#include <string>

#include "layer/base/cl_compat.h"
#include "layer/egl/egl_api.hpp"
#include "layer/egl/object_records.hpp"

namespace cldmabuf::egl {

// How the EGL/GL creation entry points refuse a call: one log line naming
// the API call, the error counted with every other refused import
// (CLDMABUF_STATS' import_errors), the spec's code through errcode_ret.
// Returns NULL for the caller to return.
cl_mem refuse(cl_int *errcode_ret, cl_int err, const char *what, const std::string &why);

// The layer's own buffer/image import (which egl calls) failed: it has
// already counted its refusal, so this only names the egl call that made
// the import, and passes the code on.  Returns NULL.
cl_mem import_failed(cl_int *errcode_ret, cl_int err, const char *what, const std::string &why);

// The access flags every GL/EGL object creation takes (no host pointer flags).
bool valid_access_flags(cl_mem_flags flags);
inline constexpr const char *access_flags_rule =
    "flags must be CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY or CL_MEM_READ_WRITE";

// What differs between the calls that import an EGLImage.
struct ImportRequest {
    const char *what;        // the API call, for log lines
    cl_int invalid_object;   // CL_INVALID_EGL_OBJECT_KHR or CL_INVALID_GL_OBJECT
    cl_int bad_format;       // CL_IMAGE_FORMAT_NOT_SUPPORTED or CL_INVALID_IMAGE_FORMAT_DESCRIPTOR
    cl_int refused_tiling;   // CL_IMAGE_FORMAT_NOT_SUPPORTED or CL_INVALID_OPERATION
    bool allow_tiled;
};

// Wraps `object.image` (valid on `object.display`) as a 2D cl image of
// `context`.  `object` (display/image/GL facts) is tracked on success; on
// failure nothing is left open (the caller still owns the EGLImage).
cl_mem import_image(cl_context context, cl_mem_flags flags, const EglApi &egl, EglObject object,
                    const ImportRequest &req, cl_int *errcode_ret);

}  // namespace cldmabuf::egl
