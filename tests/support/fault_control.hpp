// The fault injector's control API (tests/fault/fault_inject.cpp), looked up
// with dlsym so that a test binary still loads without the instrument
// preloaded.  Used by the host and the EGL fault sweeps.
#pragma once

#include <dlfcn.h>

namespace cldmabuf::test {

struct FaultControl {
    void (*record)(void) = nullptr;          // count the layer's calls, fail none
    void (*arm)(long nth, int err) = nullptr; // fail call `nth` from now with err
    void (*off)(void) = nullptr;
    long (*calls)(void) = nullptr;
    int (*fired)(void) = nullptr;
    const char *(*call_name)(long i) = nullptr;
    unsigned long (*call_request)(long i) = nullptr;  // an ioctl's request
    // What the last armed run failed (optional: older injectors lack them).
    const char *(*fired_name)(void) = nullptr;
    unsigned long (*fired_request)(void) = nullptr;
    bool loaded = false;

    FaultControl() {
        record = reinterpret_cast<decltype(record)>(dlsym(RTLD_DEFAULT, "cldmabuf_fault_record"));
        arm = reinterpret_cast<decltype(arm)>(dlsym(RTLD_DEFAULT, "cldmabuf_fault_arm"));
        off = reinterpret_cast<decltype(off)>(dlsym(RTLD_DEFAULT, "cldmabuf_fault_off"));
        calls = reinterpret_cast<decltype(calls)>(dlsym(RTLD_DEFAULT, "cldmabuf_fault_calls"));
        fired = reinterpret_cast<decltype(fired)>(dlsym(RTLD_DEFAULT, "cldmabuf_fault_fired"));
        call_name = reinterpret_cast<decltype(call_name)>(dlsym(RTLD_DEFAULT, "cldmabuf_fault_call_name"));
        call_request = reinterpret_cast<decltype(call_request)>(dlsym(RTLD_DEFAULT, "cldmabuf_fault_call_request"));
        fired_name = reinterpret_cast<decltype(fired_name)>(dlsym(RTLD_DEFAULT, "cldmabuf_fault_fired_name"));
        fired_request = reinterpret_cast<decltype(fired_request)>(dlsym(RTLD_DEFAULT, "cldmabuf_fault_fired_request"));
        loaded = call_request && record && arm && off && calls && fired && call_name;
    }
};

inline const FaultControl &fault() {
    static const FaultControl control;
    return control;
}

}  // namespace cldmabuf::test
