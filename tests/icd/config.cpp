// The test ICD's modes (CLDMABUF_TESTICD), its record of what it received,
// and the dispatch table built from the modes.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <sstream>

#include "testicd.hpp"

namespace testicd {

const Config &config() {
    static const Config c = [] {
        Config cfg;
        const char *env = std::getenv("CLDMABUF_TESTICD");
        std::stringstream words(env ? env : "");
        std::string w;
        while (std::getline(words, w, ',')) {
            if (w == "native_opaque_fd") cfg.native_opaque_fd = true;
            else if (w == "native_dmabuf") cfg.native_dmabuf = true;
            else if (w == "semaphores") cfg.semaphores = true;
            else if (w == "arm_import") cfg.arm_import = true;
            else if (w == "va_sharing") cfg.va_sharing = true;
            else if (w == "discrete") cfg.discrete = true;
            else if (w == "profiling") cfg.profiling = true;
            else if (w == "quirk_accept_overlap") cfg.quirk_accept_overlap = true;
            else if (w == "late_destructors") cfg.late_destructors = true;
            else if (w == "reuse_events") cfg.reuse_events = true;
            else if (w == "held_event_refs") cfg.held_event_refs = true;
            else if (w == "manual") cfg.manual = true;
            else if (w == "late_callbacks") cfg.late_callbacks = true;
            else if (w == "no_terminated_callbacks") cfg.no_terminated_callbacks = true;
            else if (w == "held_callbacks") cfg.held_callbacks = true;
            else if (w == "fail_queue_behind") cfg.fail_queue_behind = true;
            else if (w.rfind("callback_delay_ms=", 0) == 0) cfg.callback_delay_ms = std::atoi(w.c_str() + 18);
            else if (w == "version=1.2") cfg.major = 1, cfg.minor = 2;
            else if (w == "version=2.1") cfg.major = 2, cfg.minor = 1;
            else if (w == "version=3.0") cfg.major = 3, cfg.minor = 0;
            else if (!w.empty()) std::fprintf(stderr, "testicd: unknown CLDMABUF_TESTICD word '%s'\n", w.c_str());
        }
        return cfg;
    }();
    return c;
}

namespace {
std::mutex fault_mutex;
std::string fault_function;
unsigned long fault_nth = 0, fault_calls = 0, fault_fired = 0;
std::atomic<long> live_mems{0}, live_events{0};
}  // namespace

void arm_failure(const std::string &spec) {
    std::lock_guard guard(fault_mutex);
    const size_t colon = spec.find(':');
    fault_function = spec.substr(0, colon);
    fault_nth = colon == std::string::npos ? 0 : std::strtoul(spec.c_str() + colon + 1, nullptr, 10);
    fault_calls = fault_fired = 0;
}

bool injected_failure(const char *function) {
    std::lock_guard guard(fault_mutex);
    if (fault_function.empty() || fault_function != function) return false;
    if (++fault_calls != fault_nth) return false;
    ++fault_fired;
    return true;
}

void fault_state(cl_ulong out[4]) {
    std::lock_guard guard(fault_mutex);
    out[0] = fault_calls;
    out[1] = fault_fired;
    out[2] = static_cast<cl_ulong>(live_mems.load());
    out[3] = static_cast<cl_ulong>(live_events.load());
}

void count_object(Kind kind, int delta) {
    if (kind == Kind::mem) live_mems += delta;
    if (kind == Kind::event) live_events += delta;
}

namespace {
std::mutex record_mutex;
std::string record_text;
}  // namespace

void record(const std::string &line) {
    std::lock_guard guard(record_mutex);
    record_text += line;
    record_text += '\n';
}

std::string recorded() {
    std::lock_guard guard(record_mutex);
    return record_text;
}

void clear_record() {
    std::lock_guard guard(record_mutex);
    record_text.clear();
}

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

// Every value as given, device handle lists included, so a test can compare
// the list the ICD saw with the list the application passed.
std::string properties_text(const cl_mem_properties *props) {
    if (!props) return "NULL";
    std::string s;
    for (const cl_mem_properties *p = props; *p;) {
        if (*p == CL_MEM_DEVICE_HANDLE_LIST_KHR) {  // name, devices, end marker (0)
            for (s += hex(*p++) + ","; *p; ++p) s += hex(*p) + ",";
            s += hex(*p++) + ",";
            continue;
        }
        s += hex(p[0]) + "," + hex(p[1]) + ",";
        p += 2;
    }
    return s + "0";
}

cl_icd_dispatch *dispatch() {
    static cl_icd_dispatch table = [] {
        cl_icd_dispatch d;
        std::memset(&d, 0, sizeof d);
        fill_platform_slots(d);
        fill_memory_slots(d);
        fill_command_slots(d);
        // What an older ICD's table does not have (the loader must not call it).
        if (!config().at_least(2, 0)) {
            d.clCreateCommandQueueWithProperties = nullptr;
        }
        if (!config().at_least(2, 1)) {
            d.clGetHostTimer = nullptr;
            d.clGetDeviceAndHostTimer = nullptr;
        }
        if (!config().at_least(3, 0)) {
            d.clCreateBufferWithProperties = nullptr;
            d.clCreateImageWithProperties = nullptr;
            d.clSetContextDestructorCallback = nullptr;
        }
        return d;
    }();
    return &table;
}

// Never destroyed (see queues() in commands.cpp): calls from a layer's
// threads during exit must still find them.
std::mutex &lock() {
    static auto *m = new std::mutex;
    return *m;
}

std::condition_variable &changed() {
    static auto *cv = new std::condition_variable;
    return *cv;
}

void run_later(Later &later) {
    for (auto &fn : later) fn();
    later.clear();
}

cl_int answer(const void *data, size_t bytes, size_t size, void *value, size_t *size_ret) {
    if (value) {
        if (size < bytes) return CL_INVALID_VALUE;
        if (bytes) std::memcpy(value, data, bytes);
    }
    if (size_ret) *size_ret = bytes;
    return CL_SUCCESS;
}

}  // namespace testicd
