// The ICD's profile (layer/icd/profile.hpp) over a fake ICD table: facts
// keyed by platform and root device, unknown until learned (and not
// recorded for an invalid object), asked of the ICD once, recorded by the
// probes, and consistent under a few threads.
#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/failed_events.hpp"
#include "layer/icd/profile.hpp"

using namespace cldmabuf;

namespace {

cl_platform_id const kPocl = reinterpret_cast<cl_platform_id>(uintptr_t{0x1000});
cl_platform_id const kNvidia = reinterpret_cast<cl_platform_id>(uintptr_t{0x2000});
cl_platform_id const kInvalid = reinterpret_cast<cl_platform_id>(uintptr_t{0x3000});
cl_device_id const kRoot = reinterpret_cast<cl_device_id>(uintptr_t{0x30});
cl_device_id const kSub = reinterpret_cast<cl_device_id>(uintptr_t{0x31});
cl_device_id const kGpu = reinterpret_cast<cl_device_id>(uintptr_t{0x40});
cl_command_queue const kQueue = reinterpret_cast<cl_command_queue>(uintptr_t{0x50});

std::atomic<int> platform_calls{0};

cl_int answer_string(const std::string &s, size_t size, void *value, size_t *size_ret) {
    if (size_ret) *size_ret = s.size() + 1;
    if (value) {
        if (size < s.size() + 1) return CL_INVALID_VALUE;
        std::memcpy(value, s.c_str(), s.size() + 1);
    }
    return CL_SUCCESS;
}

cl_int CL_API_CALL fake_platform_info(cl_platform_id p, cl_platform_info name, size_t size, void *value,
                                      size_t *size_ret) {
    platform_calls++;
    if (p != kPocl && p != kNvidia) return CL_INVALID_PLATFORM;
    const bool pocl = p == kPocl;
    switch (name) {
    case CL_PLATFORM_PROFILE: return answer_string("FULL_PROFILE", size, value, size_ret);
    case CL_PLATFORM_NAME:
        return answer_string(pocl ? "Portable Computing Language" : "NVIDIA CUDA", size, value, size_ret);
    case CL_PLATFORM_VENDOR: return answer_string(pocl ? "The pocl project" : "NVIDIA Corporation", size, value, size_ret);
    case CL_PLATFORM_VERSION:
        return answer_string(pocl ? "OpenCL 3.0 PoCL 3.1+debian" : "OpenCL 2.1 CUDA 13.0.98", size, value, size_ret);
    case CL_PLATFORM_EXTENSIONS:
        return answer_string(pocl ? "cl_khr_icd cl_khr_semaphore_x" : "cl_khr_icd cl_khr_semaphore cl_khr_gl_sharing",
                             size, value, size_ret);
    default: return CL_INVALID_VALUE;
    }
}

cl_int CL_API_CALL fake_device_info(cl_device_id d, cl_device_info name, size_t size, void *value, size_t *size_ret) {
    if (d != kRoot && d != kSub && d != kGpu) return CL_INVALID_DEVICE;
    if (name == CL_DEVICE_PLATFORM && size >= sizeof(cl_platform_id)) {
        *static_cast<cl_platform_id *>(value) = d == kGpu ? kNvidia : kPocl;
        if (size_ret) *size_ret = sizeof(cl_platform_id);
        return CL_SUCCESS;
    }
    if (name == CL_DEVICE_PARENT_DEVICE && size >= sizeof(cl_device_id)) {
        *static_cast<cl_device_id *>(value) = d == kSub ? kRoot : nullptr;
        if (size_ret) *size_ret = sizeof(cl_device_id);
        return CL_SUCCESS;
    }
    return CL_INVALID_VALUE;
}

cl_int CL_API_CALL fake_queue_info(cl_command_queue q, cl_command_queue_info name, size_t size, void *value,
                                   size_t *size_ret) {
    if (q != kQueue || name != CL_QUEUE_DEVICE || size < sizeof(cl_device_id)) return CL_INVALID_COMMAND_QUEUE;
    *static_cast<cl_device_id *>(value) = kGpu;
    if (size_ret) *size_ret = sizeof(cl_device_id);
    return CL_SUCCESS;
}

// Points next() at the fake ICD for one test case, and back.
struct FakeIcd {
    cl_icd_dispatch saved;
    FakeIcd() {
        saved = dispatch_tables::guarded_next;
        dispatch_tables::guarded_next.clGetPlatformInfo = fake_platform_info;
        dispatch_tables::guarded_next.clGetDeviceInfo = fake_device_info;
        dispatch_tables::guarded_next.clGetCommandQueueInfo = fake_queue_info;
        profile_reset_for_tests();
        platform_calls = 0;
    }
    ~FakeIcd() {
        profile_reset_for_tests();
        install_failure_mode_source(nullptr);
        dispatch_tables::guarded_next = saved;
    }
};

const PlatformProfile *find(const ProfileSnapshot &s, cl_platform_id p) {
    for (const auto &e : s.platforms)
        if (e.platform == p) return &e;
    return nullptr;
}

}  // namespace

TEST_CASE("a platform's facts are keyed by platform and asked of the ICD once", "[icd-profile]") {
    FakeIcd icd;
    CHECK(profile_platform_version(kPocl) == CL_MAKE_VERSION(3, 0, 0));
    CHECK(profile_platform_version(kNvidia) == CL_MAKE_VERSION(2, 1, 0));
    const int asked = platform_calls;
    CHECK(profile_platform_version(kPocl) == CL_MAKE_VERSION(3, 0, 0));
    CHECK(profile_platform_version(kNvidia) == CL_MAKE_VERSION(2, 1, 0));
    CHECK(platform_calls == asked);  // the second reads are the profile's

    // Whole words only: "cl_khr_semaphore_x" is not cl_khr_semaphore.
    CHECK(profile_native_semaphores(kPocl).known());
    CHECK_FALSE(profile_native_semaphores(kPocl).value);
    CHECK(profile_native_semaphores(kNvidia).value);
    CHECK(profile_native_semaphores(kNvidia).source == FactSource::icd);
    CHECK(profile_native_gl_sharing(kNvidia));
    CHECK_FALSE(profile_native_gl_sharing(kPocl));
    CHECK_FALSE(profile_native_egl_image(kNvidia));

    // Which ICD it is needs its name too: unknown until a fact asked it.
    ProfileSnapshot s = profile_snapshot();
    REQUIRE(find(s, kNvidia) != nullptr);
    CHECK_FALSE(find(s, kNvidia)->kind.known());
    profile_failure_mode(kPocl);
    profile_failure_mode(kNvidia);
    s = profile_snapshot();
    REQUIRE(find(s, kPocl) != nullptr);
    CHECK(find(s, kPocl)->kind.value == IcdKind::pocl);
    CHECK(find(s, kNvidia)->kind.value == IcdKind::nvidia);
    CHECK(find(s, kPocl)->version.value == "OpenCL 3.0 PoCL 3.1+debian");
    // Not read yet: unknown, not a default that looks known.
    CHECK_FALSE(find(s, kPocl)->marker_timing.known());
    CHECK_FALSE(find(s, kPocl)->vendor.known());
}

TEST_CASE("an invalid platform's facts stay unknown and are not recorded", "[icd-profile]") {
    FakeIcd icd;
    CHECK(profile_platform_version(kInvalid) == 0);
    CHECK_FALSE(profile_native_semaphores(kInvalid).known());
    CHECK_FALSE(profile_native_semaphores(nullptr).known());
    CHECK(find(profile_snapshot(), kInvalid) == nullptr);
    // Asked again next time, as the caches did.
    const int asked = platform_calls;
    CHECK(profile_platform_version(kInvalid) == 0);
    CHECK(platform_calls > asked);
}

TEST_CASE("the failure mode is chosen from the ICD's identity and read through the installed source",
          "[icd-profile]") {
    FakeIcd icd;
    CHECK(failure_mode(kQueue) == FailureMode::sidetable);  // nothing installed: the safe mode
    install_icd_profile();
    CHECK(failure_mode(kQueue) == FailureMode::propagate);  // kQueue is on the NVIDIA device
    CHECK(profile_failure_mode(kPocl) == FailureMode::sidetable);
    const ProfileSnapshot s = profile_snapshot();
    REQUIRE(find(s, kNvidia) != nullptr);
    CHECK(find(s, kNvidia)->failure_mode.source == FactSource::chosen);
    CHECK(find(s, kNvidia)->failure_why.find("NVIDIA") != std::string::npos);
    // A queue the ICD does not know: the safe mode, nothing recorded for it.
    CHECK(failure_mode(reinterpret_cast<cl_command_queue>(uintptr_t{0x51})) == FailureMode::sidetable);
    CHECK(profile_snapshot().platforms.size() == 2);
    CHECK(profile_marker_timing(kPocl).looks == 64);
    CHECK(profile_marker_timing(kPocl).look == std::chrono::microseconds(50));
}

TEST_CASE("a probe's facts are recorded on the root device and read from there", "[icd-profile]") {
    FakeIcd icd;
    CHECK_FALSE(recorded_zero_copy(kSub, ExporterKind::udmabuf).has_value());
    record_zero_copy(kSub, ExporterKind::udmabuf, ZeroCopyVerdict::copies, FactSource::probe);
    REQUIRE(recorded_zero_copy(kRoot, ExporterKind::udmabuf).has_value());
    CHECK(*recorded_zero_copy(kRoot, ExporterKind::udmabuf) == ZeroCopyVerdict::copies);
    CHECK_FALSE(recorded_zero_copy(kRoot, ExporterKind::i915).has_value());  // per exporter kind
    CHECK_FALSE(recorded_zero_copy(kGpu, ExporterKind::udmabuf).has_value());  // per device
    // The first verdict stays (as the cache's emplace).
    record_zero_copy(kRoot, ExporterKind::udmabuf, ZeroCopyVerdict::in_place, FactSource::probe);
    CHECK(*recorded_zero_copy(kSub, ExporterKind::udmabuf) == ZeroCopyVerdict::copies);

    CHECK_FALSE(recorded_route_in_place(kRoot, Route::host_ptr).has_value());
    record_route_in_place(kSub, Route::host_ptr, true);
    record_route_in_place(kRoot, Route::image_from_buffer, false);
    CHECK(recorded_route_in_place(kRoot, Route::host_ptr) == std::optional<bool>(true));
    CHECK(recorded_route_in_place(kSub, Route::image_from_buffer) == std::optional<bool>(false));

    CHECK(record_staging_refused(kSub));
    CHECK_FALSE(record_staging_refused(kRoot));  // one log line per device
    CHECK(record_registration_refused(kGpu));

    const ProfileSnapshot s = profile_snapshot();
    REQUIRE(s.devices.size() == 2);
    for (const DeviceProfile &d : s.devices) {
        CHECK((d.device == kRoot || d.device == kGpu));
        CHECK(d.platform == (d.device == kGpu ? kNvidia : kPocl));
        if (d.device == kRoot) {
            CHECK(d.staging_refused.value);
            CHECK(d.staging_refused.source == FactSource::probe);
            CHECK_FALSE(d.registration_refused.known());
        }
    }
}

TEST_CASE("the profile is consistent when a few threads learn and record at once", "[icd-profile]") {
    FakeIcd icd;
    std::atomic<int> wrong{0}, first_refusals{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 200; ++i) {
                if (profile_platform_version(t % 2 ? kPocl : kNvidia) !=
                    (t % 2 ? CL_MAKE_VERSION(3, 0, 0) : CL_MAKE_VERSION(2, 1, 0)))
                    wrong++;
                if (profile_native_semaphores(kNvidia).value != true) wrong++;
                if (profile_failure_mode(kPocl) != FailureMode::sidetable) wrong++;
                record_route_in_place(kSub, Route::host_ptr, true);
                if (recorded_route_in_place(kRoot, Route::host_ptr) != std::optional<bool>(true)) wrong++;
                if (record_staging_refused(kGpu)) first_refusals++;
            }
        });
    for (auto &t : threads) t.join();
    CHECK(wrong == 0);
    CHECK(first_refusals == 1);
    const ProfileSnapshot s = profile_snapshot();
    CHECK(s.platforms.size() == 2);
    CHECK(s.devices.size() == 2);
}
