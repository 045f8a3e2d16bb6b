#include "layer/egl/gl_event.hpp"

#include <CL/cl_gl.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/egl/entry_points.hpp"
#include "layer/egl/forwarding.hpp"
#include "layer/egl/gl_sharing_contexts.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/base/log.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {
namespace {

using Clock = std::chrono::steady_clock;

struct Job {
    const EglApi *egl;
    EGLDisplay dpy;
    EGLContext producer;
    GLsync sync;
    IcdEvent event;  // the waiter's reference
    Clock::time_point deadline;
};

// Never destroyed: the detached waiter may still be waiting on them while
// the process exits.
struct WaiterState {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<Job> jobs;
    bool running = false;
    // The waiter's contexts, one per producer context (shared with it).
    std::map<std::pair<EGLDisplay, EGLContext>, EGLContext> contexts;
};
WaiterState &state() {
    static WaiterState *s = new WaiterState;
    return *s;
}

EGLContext waiter_context(const Job &job, bool fresh) {
    auto &waiter_contexts = state().contexts;
    auto key = std::make_pair(job.dpy, job.producer);
    if (fresh) waiter_contexts.erase(key);  // stale: the display was terminated, or the producer replaced
    if (auto it = waiter_contexts.find(key); it != waiter_contexts.end()) return it->second;
    job.egl->BindAPI(EGL_OPENGL_ES_API);
    const EGLint attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE};
    EGLContext ctx = job.egl->CreateContext(job.dpy, EGL_NO_CONFIG_KHR, job.producer, attribs);
    if (ctx != EGL_NO_CONTEXT) waiter_contexts[key] = ctx;
    return ctx;
}

void finish(Job &job, cl_int status) {
    if (status != CL_SUCCESS) event_types().set_failed(job.event.get(), status);
    next().clSetUserEventStatus(job.event.get(), CL_COMPLETE);
    job.event.reset();
}

// glClientWaitSync on each pending sync in turn: a short wait when only one
// is pending, a poll otherwise, so that one slow sync delays no other.
void waiter() {
    WaiterState &st = state();
    EGLContext current = EGL_NO_CONTEXT;
    EGLDisplay current_dpy = EGL_NO_DISPLAY;
    const EglApi *egl = nullptr;
    std::unique_lock lock(st.mutex);
    for (;;) {
        if (st.jobs.empty() && current != EGL_NO_CONTEXT) {
            // Idle: let go of the context, so that the application can
            // terminate its display without our context still bound.
            lock.unlock();
            egl->MakeCurrent(current_dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
            current = EGL_NO_CONTEXT;
            lock.lock();
        }
        st.wake.wait(lock, [&] { return !st.jobs.empty(); });
        Job job = std::move(st.jobs.front());
        st.jobs.pop_front();
        const bool alone = st.jobs.empty();
        lock.unlock();
        egl = job.egl;
        cl_int status = 1;  // pending
        EGLContext ctx = waiter_context(job, false);
        if (ctx != EGL_NO_CONTEXT && ctx != current &&
            !job.egl->MakeCurrent(job.dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx))
            ctx = waiter_context(job, true);
        if (ctx == EGL_NO_CONTEXT) {
            LOG_ERROR("clCreateEventFromGLsyncKHR: no GLES context sharing the producer's objects (%s)",
                      egl_error_name(job.egl->GetError()));
            status = CL_OUT_OF_RESOURCES;
        } else if (ctx != current) {
            if (job.egl->MakeCurrent(job.dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
                current = ctx;
                current_dpy = job.dpy;
            } else {
                LOG_ERROR("clCreateEventFromGLsyncKHR: eglMakeCurrent of the waiter's context failed (%s)",
                          egl_error_name(job.egl->GetError()));
                status = CL_OUT_OF_RESOURCES;
            }
        }
        if (status == 1) {
            const GLenum r = job.egl->ClientWaitSync(job.sync, 0, alone ? 5'000'000 : 0);
            if (r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED) {
                status = CL_SUCCESS;
            } else if (r == GL_WAIT_FAILED) {
                LOG_ERROR("clCreateEventFromGLsyncKHR: glClientWaitSync failed (GL error 0x%x): not a sync object of "
                          "the GL context's share group",
                          job.egl->GetGLError());
                status = CL_INVALID_GL_OBJECT;
            } else if (Clock::now() >= job.deadline) {
                LOG_ERROR("clCreateEventFromGLsyncKHR: the GL sync did not signal in %d ms (CLDMABUF_FENCE_TIMEOUT_MS)",
                          fence_timeout_ms());
                status = CL_OUT_OF_RESOURCES;
            }
        }
        if (status != 1) finish(job, status);
        if (status == 1 && !alone) std::this_thread::sleep_for(std::chrono::microseconds(200));
        lock.lock();
        if (status == 1) st.jobs.push_back(std::move(job));
    }
}

}  // namespace

cl_event gl_sync_event(const EglApi &egl, cl_context context, EGLDisplay dpy, EGLContext producer, GLsync sync,
                       cl_int *code, std::string *why) {
    if (!egl.ClientWaitSync || !egl.IsSync) {
        *code = CL_INVALID_OPERATION;
        *why = "glClientWaitSync is not available";
        return nullptr;
    }
    if (!sync) {
        *code = CL_INVALID_GL_OBJECT;
        *why = "sync is NULL";
        return nullptr;
    }
    // The producer's own context can tell a bad name at once; elsewhere the
    // waiter finds out (and fails the event).
    if (egl.GetCurrentContext() == producer && egl.GetCurrentDisplay() == dpy && !egl.IsSync(sync)) {
        *code = CL_INVALID_GL_OBJECT;
        *why = "sync is not a GL sync object of the GL context";
        return nullptr;
    }
    cl_int err = CL_SUCCESS;
    IcdEvent event(next().clCreateUserEvent(context, &err));
    if (!event) {
        *code = err;
        *why = "clCreateUserEvent failed (" + std::to_string(err) + ")";
        return nullptr;
    }
    event_types().add(event.get(), CL_COMMAND_GL_FENCE_SYNC_OBJECT_KHR);
    WaiterState &st = state();
    std::lock_guard lock(st.mutex);
    st.jobs.push_back(Job{&egl, dpy, producer, sync, IcdEvent::retain(event.get()),
                          Clock::now() + std::chrono::milliseconds(fence_timeout_ms())});
    if (!st.running) {
        // Detached: it lives as long as the process (its GL contexts with it).
        std::thread(waiter).detach();
        st.running = true;
    }
    st.wake.notify_one();
    return event.hand_off();  // the application's
}

namespace egl {

// clCreateEventFromGLsyncKHR: the entry point (contexts the ICD made go to the ICD).
cl_event CL_API_CALL create_event_from_gl_sync(cl_context context, cl_GLsync sync, cl_int *errcode_ret) {
    constexpr const char *what = "clCreateEventFromGLsyncKHR";
    GlShare share;
    if (!find_share(context, &share)) {
        if (forward_gl(context) && next().clCreateEventFromGLsyncKHR)
            return next().clCreateEventFromGLsyncKHR(context, sync, errcode_ret);
        LOG_ERROR("%s: the context was not created with CL_GL_CONTEXT_KHR and CL_EGL_DISPLAY_KHR", what);
        if (errcode_ret) *errcode_ret = CL_INVALID_CONTEXT;
        return nullptr;
    }
    std::string why;
    const EglApi *egl = egl_api(&why);
    cl_int code = CL_INVALID_CONTEXT;
    cl_event event = egl ? gl_sync_event(*egl, context, share.display, share.context, reinterpret_cast<GLsync>(sync),
                                         &code, &why)
                         : nullptr;
    if (!event) {
        LOG_ERROR("%s: %s", what, why.c_str());
        if (errcode_ret) *errcode_ret = code;
        return nullptr;
    }
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return event;
}

}  // namespace egl
}  // namespace cldmabuf
