// Stand-in for the CTS's test_common/harness/typeWrappers.h: owning handles
// that release their object when they go out of scope.
#pragma once

#include <CL/cl.h>

#include <utility>

namespace standin {
template <typename T, cl_int(CL_API_CALL *Retain)(T), cl_int(CL_API_CALL *Release)(T)>
class Wrapper {
public:
    Wrapper() = default;
    Wrapper(T object): object(object) {}
    Wrapper(const Wrapper &w): object(w.object) { if (object) Retain(object); }
    Wrapper(Wrapper &&w) noexcept: object(std::exchange(w.object, nullptr)) {}
    Wrapper &operator=(T rhs) { reset(); object = rhs; return *this; }
    Wrapper &operator=(Wrapper w) { std::swap(object, w.object); return *this; }
    ~Wrapper() { reset(); }
    void reset() { if (object) Release(object); object = nullptr; }
    operator T() const { return object; }
    T *operator&() { return &object; }
    bool operator==(const T &rhs) const { return object == rhs; }

private:
    T object = nullptr;
};
}  // namespace standin

using clContextWrapper = standin::Wrapper<cl_context, clRetainContext, clReleaseContext>;
using clProgramWrapper = standin::Wrapper<cl_program, clRetainProgram, clReleaseProgram>;
using clKernelWrapper = standin::Wrapper<cl_kernel, clRetainKernel, clReleaseKernel>;
using clMemWrapper = standin::Wrapper<cl_mem, clRetainMemObject, clReleaseMemObject>;
using clCommandQueueWrapper = standin::Wrapper<cl_command_queue, clRetainCommandQueue, clReleaseCommandQueue>;
using clEventWrapper = standin::Wrapper<cl_event, clRetainEvent, clReleaseEvent>;
