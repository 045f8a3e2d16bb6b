// An EGLImage as a 2D cl image: exported as a dma-buf
// (eglExportDMABUFImageMESA) and imported through the layer's own
// clCreateImageWithProperties, like any other dma-buf.  A tiled export is
// imported through a linear copy (linear_copy.hpp), with the caller's consent.
#pragma once

#include "layer/base/cl_compat.h"
#include "layer/egl/egl_api.hpp"
#include "layer/egl/egl_objects.hpp"

namespace cldmabuf::egl {

// What differs between the calls that import an EGLImage.
struct ImportRequest {
    const char *what;        // the API call, for log lines
    cl_int invalid_object;   // CL_INVALID_EGL_OBJECT_KHR or CL_INVALID_GL_OBJECT
    cl_int bad_format;       // CL_IMAGE_FORMAT_NOT_SUPPORTED or CL_INVALID_IMAGE_FORMAT_DESCRIPTOR
    cl_int refused_tiling;   // CL_IMAGE_FORMAT_NOT_SUPPORTED or CL_INVALID_OPERATION
    bool allow_tiled;
};

// After the layer's own import of `fd` (an export of the layer's, handed to
// clCreate*WithProperties): the import works on its duplicate, so `fd` is
// closed now instead of being left to the import.  The import closes an
// owned fd at destroy only when it could record its identity (fstat) at
// import (docs/layer-rules.md, "Who owns the fd"); for an export nobody else
// holds, that rule would leak it.  An import the layer did not record keeps
// `fd` (closed with it).
void close_handed_fd(cl_mem mem, int fd);

// Wraps `object.image` (valid on `object.display`) as a 2D cl image of
// `context`.  `object` (display/image/GL facts) is tracked on success; on
// failure nothing is left open (the caller still owns the EGLImage).
cl_mem import_image(cl_context context, cl_mem_flags flags, const EglApi &egl, EglObject object,
                    const ImportRequest &req, cl_int *errcode_ret);

}  // namespace cldmabuf::egl
