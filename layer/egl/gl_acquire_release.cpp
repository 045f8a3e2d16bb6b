// clEnqueue{Acquire,Release}{GL,EGL}Objects for objects the layer made: the
// import's own acquire (bounded implicit-fence wait, SYNC START) and release
// (SYNC END), with the command type of the interop API.  On the tiled-export
// path the GPU copies run around them: GL -> linear before the acquire,
// linear -> GL after the release.
#include <string>

#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/egl/dmabuf_export.hpp"
#include "layer/egl/object_records.hpp"
#include "layer/egl/entry_points.hpp"
#include "layer/egl/forwarding.hpp"
#include "layer/egl/gl_sharing_contexts.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/handoff/acquire_release.hpp"
#include "layer/base/log.hpp"
#include "layer/core/registry.hpp"

#ifndef CL_COMMAND_ACQUIRE_GL_OBJECTS
#define CL_COMMAND_ACQUIRE_GL_OBJECTS 0x11FF
#define CL_COMMAND_RELEASE_GL_OBJECTS 0x1200
#endif

namespace cldmabuf::egl {
namespace {

using ImportStep = cl_int(CL_API_CALL *)(cl_command_queue, cl_uint, const cl_mem *, cl_uint, const cl_event *,
                                         cl_event *);

cl_int run_step(ImportStep step, cl_command_type type, cl_command_queue queue, cl_uint n, const cl_mem *mems,
                cl_uint num_events, const cl_event *wait_list, cl_event *event) {
    cl_event ev = nullptr;
    cl_int err = step(queue, n, mems, num_events, wait_list, event ? &ev : nullptr);
    if (err == CL_SUCCESS && event) {
        event_types().add(ev, type);
        *event = ev;
    }
    return err;
}

// The tiled-export path's copies (the release waits for its own completion
// on this path only: the copy back must follow OpenCL's writes).
cl_int copy_objects(cl_uint n, const cl_mem *mems, bool to_linear, const char *what) {
    const EglApi *egl = egl_api();
    for (cl_uint i = 0; i < n; ++i) {
        EglObject object;
        if (!find_object(mems[i], &object) || !object.copy) continue;
        if (!to_linear && object.flags == CL_MEM_READ_ONLY) continue;
        std::string why;
        const bool ok = egl && with_gl_context(
                                   *egl, object.display, object.producer,
                                   [&](std::string *w) { return blit_linear(*egl, object.image, *object.copy, to_linear, w); },
                                   &why);
        if (!ok) {
            LOG_ERROR("%s: the GPU copy %s the linear buffer failed: %s", what, to_linear ? "into" : "out of",
                      why.c_str());
            return CL_OUT_OF_RESOURCES;
        }
    }
    return CL_SUCCESS;
}

bool any_copy_back(cl_uint n, const cl_mem *mems) {
    for (cl_uint i = 0; i < n; ++i) {
        EglObject object;
        if (find_object(mems[i], &object) && object.copy && object.flags != CL_MEM_READ_ONLY) return true;
    }
    return false;
}

cl_int acquire_step(ImportStep step, cl_command_type type, cl_command_queue queue, cl_uint n, const cl_mem *mems,
                    cl_uint num_events, const cl_event *wait_list, cl_event *event, const char *what) {
    if (cl_int err = copy_objects(n, mems, true, what); err != CL_SUCCESS) return err;
    return run_step(step, type, queue, n, mems, num_events, wait_list, event);
}

cl_int release_step(ImportStep step, cl_command_type type, cl_command_queue queue, cl_uint n, const cl_mem *mems,
                    cl_uint num_events, const cl_event *wait_list, cl_event *event, const char *what) {
    if (!any_copy_back(n, mems)) return run_step(step, type, queue, n, mems, num_events, wait_list, event);
    IcdEvent done;
    cl_int err = run_step(step, type, queue, n, mems, num_events, wait_list, done.out());
    if (err != CL_SUCCESS) return err;
    err = next().clWaitForEvents(1, done.as_list());
    if (err == CL_SUCCESS) err = copy_objects(n, mems, false, what);
    if (event) *event = done.hand_off();  // the application's
    return err;
}

// Which of the objects the layer made; CL_SUCCESS when all of them (or, with
// *forward set, none of them and the ICD should get the call).
cl_int classify_gl_mems(cl_command_queue queue, cl_uint n, const cl_mem *mems, bool gl, bool *forward, const char *what) {
    *forward = false;
    cl_context context = queue_context(queue);
    if (!context) {
        LOG_ERROR("%s: invalid command queue", what);
        return CL_INVALID_COMMAND_QUEUE;
    }
    if ((n == 0) != (mems == nullptr)) {
        LOG_ERROR("%s: num_objects and mem_objects disagree", what);
        return CL_INVALID_VALUE;
    }
    cl_uint made_here = 0;
    for (cl_uint i = 0; i < n; ++i) {
        EglObject object;
        if (find_object(mems[i], &object) && object.from_gl == gl) ++made_here;
    }
    const cl_platform_id platform = context_platform(context);
    const bool icd = gl ? icd_gl_sharing(platform) : icd_egl_image(platform);
    if (made_here == 0 && icd) {
        *forward = true;
        return CL_SUCCESS;
    }
    if (made_here != n) {
        LOG_ERROR("%s: a memory object was not created from %s", what, gl ? "a GL object" : "an EGLImage");
        return gl ? CL_INVALID_GL_OBJECT : CL_INVALID_EGL_OBJECT_KHR;
    }
    if (gl && !find_share(context, nullptr)) {
        LOG_ERROR("%s: the queue's context was not created from a GL context", what);
        return CL_INVALID_CONTEXT;
    }
    return CL_SUCCESS;
}

// The four entry points differ only in the ICD slot they forward to, the
// command type and the kind of object they take: one template serves them
// all.  `Slot` is the next layer's entry point, used when every object is the
// ICD's own (it has the extension itself).
template <auto Slot, bool Acquire, bool Gl, cl_command_type Type>
cl_int gl_handoff(cl_command_queue queue, cl_uint n, const cl_mem *mems, cl_uint num_events, const cl_event *wait_list,
               cl_event *event) {
    static constexpr const char *what = Gl ? (Acquire ? "clEnqueueAcquireGLObjects" : "clEnqueueReleaseGLObjects")
                                           : (Acquire ? "clEnqueueAcquireEGLObjectsKHR"
                                                      : "clEnqueueReleaseEGLObjectsKHR");
    bool forward = false;
    if (cl_int err = classify_gl_mems(queue, n, mems, Gl, &forward, what); err != CL_SUCCESS) return err;
    CountedCommand counted;  // a command of the queue, forwarded or a layer step (layer/queue/epoch.hpp)
    if (forward && next().*Slot) return (next().*Slot)(queue, n, mems, num_events, wait_list, event);
    return Acquire ? acquire_step(enqueue_acquire_external_mem_objects, Type, queue, n, mems, num_events, wait_list,
                                  event, what)
                   : release_step(enqueue_release_external_mem_objects, Type, queue, n, mems, num_events, wait_list,
                                  event, what);
}

}  // namespace

cl_int CL_API_CALL enqueue_acquire_egl_objects(cl_command_queue queue, cl_uint n, const cl_mem *mems,
                                               cl_uint num_events, const cl_event *wait_list, cl_event *event) {
    return gl_handoff<&cl_icd_dispatch::clEnqueueAcquireEGLObjectsKHR, true, false, CL_COMMAND_ACQUIRE_EGL_OBJECTS_KHR>(
        queue, n, mems, num_events, wait_list, event);
}

cl_int CL_API_CALL enqueue_release_egl_objects(cl_command_queue queue, cl_uint n, const cl_mem *mems,
                                               cl_uint num_events, const cl_event *wait_list, cl_event *event) {
    return gl_handoff<&cl_icd_dispatch::clEnqueueReleaseEGLObjectsKHR, false, false, CL_COMMAND_RELEASE_EGL_OBJECTS_KHR>(
        queue, n, mems, num_events, wait_list, event);
}

cl_int CL_API_CALL enqueue_acquire_gl_objects(cl_command_queue queue, cl_uint n, const cl_mem *mems,
                                              cl_uint num_events, const cl_event *wait_list, cl_event *event) {
    return gl_handoff<&cl_icd_dispatch::clEnqueueAcquireGLObjects, true, true, CL_COMMAND_ACQUIRE_GL_OBJECTS>(
        queue, n, mems, num_events, wait_list, event);
}

cl_int CL_API_CALL enqueue_release_gl_objects(cl_command_queue queue, cl_uint n, const cl_mem *mems,
                                              cl_uint num_events, const cl_event *wait_list, cl_event *event) {
    return gl_handoff<&cl_icd_dispatch::clEnqueueReleaseGLObjects, false, true, CL_COMMAND_RELEASE_GL_OBJECTS>(
        queue, n, mems, num_events, wait_list, event);
}

}  // namespace cldmabuf::egl
