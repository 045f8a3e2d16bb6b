// The semaphore property walk (layer/sync/properties.hpp): every misuse the
// spec names gets its error, without an ICD.
#include <catch2/catch_test_macros.hpp>

#include "layer/sync/properties.hpp"

using cldmabuf::sync::parse_semaphore_properties;
using cldmabuf::sync::SemaphoreRequest;

namespace {

const cl_device_id dev_a = reinterpret_cast<cl_device_id>(0x1000);
const cl_device_id dev_b = reinterpret_cast<cl_device_id>(0x2000);
constexpr cl_semaphore_properties_khr T = CL_SEMAPHORE_TYPE_KHR, B = CL_SEMAPHORE_TYPE_BINARY_KHR;
constexpr cl_semaphore_properties_khr L = CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR, LE = CL_SEMAPHORE_DEVICE_HANDLE_LIST_END_KHR;
constexpr cl_semaphore_properties_khr X = CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR,
                                      XE = CL_SEMAPHORE_EXPORT_HANDLE_TYPES_LIST_END_KHR;
constexpr cl_semaphore_properties_khr SYNC = CL_SEMAPHORE_HANDLE_SYNC_FD_KHR;
const auto A = reinterpret_cast<cl_semaphore_properties_khr>(dev_a);
const auto Bd = reinterpret_cast<cl_semaphore_properties_khr>(dev_b);

cl_int parse(std::vector<cl_semaphore_properties_khr> p, std::vector<cl_device_id> devices = {dev_a},
             bool can_export = true, SemaphoreRequest *out = nullptr) {
    SemaphoreRequest req;
    const char *why = nullptr;
    cl_int err = parse_semaphore_properties(p.empty() ? nullptr : p.data(), devices, can_export, &req, &why);
    if (err != CL_SUCCESS) CHECK(why != nullptr);  // every refusal has its log line's reason
    if (out) *out = req;
    return err;
}

}  // namespace

TEST_CASE("semaphore properties: a binary semaphore on a one-device context", "[semaphore]") {
    SemaphoreRequest req;
    REQUIRE(parse({T, B, 0}, {dev_a}, true, &req) == CL_SUCCESS);
    CHECK(req.device == dev_a);
    CHECK_FALSE(req.device_listed);
    CHECK_FALSE(req.export_sync_fd);
    CHECK_FALSE(req.import_sync_fd);
    CHECK(req.properties == std::vector<cl_semaphore_properties_khr>{T, B, 0});
}

TEST_CASE("semaphore properties: device list, export and import", "[semaphore]") {
    SemaphoreRequest req;
    REQUIRE(parse({T, B, L, Bd, LE, X, SYNC, XE, SYNC, 7, 0}, {dev_a, dev_b}, true, &req) == CL_SUCCESS);
    CHECK(req.device == dev_b);
    CHECK(req.device_listed);
    CHECK(req.export_sync_fd);
    CHECK(req.import_sync_fd);
    CHECK(req.import_fd == 7);
    CHECK(req.properties.size() == 11);
    // An empty export list exports nothing.
    REQUIRE(parse({T, B, X, XE, 0}, {dev_a}, false, &req) == CL_SUCCESS);
    CHECK_FALSE(req.export_sync_fd);
}

TEST_CASE("semaphore properties: the spec's errors", "[semaphore]") {
    CHECK(parse({}) == CL_INVALID_VALUE);                         // NULL list
    CHECK(parse({0}) == CL_INVALID_VALUE);                        // no type
    CHECK(parse({L, A, LE, 0}) == CL_INVALID_VALUE);              // no type
    CHECK(parse({0x7fff, B, 0}) == CL_INVALID_PROPERTY);          // unknown name
    CHECK(parse({T, 2, 0}) == CL_INVALID_PROPERTY);               // not binary
    CHECK(parse({T, B, T, B, 0}) == CL_INVALID_PROPERTY);         // repeated
    CHECK(parse({T, B, L, A, LE, L, A, LE, 0}) == CL_INVALID_PROPERTY);
    CHECK(parse({T, B, X, XE, X, XE, 0}) == CL_INVALID_PROPERTY);
    CHECK(parse({T, B, SYNC, 3, SYNC, 4, 0}) == CL_INVALID_PROPERTY);
    CHECK(parse({T, B, 0}, {dev_a, dev_b}) == CL_INVALID_PROPERTY);  // multi-device context, no list
    CHECK(parse({T, B, L, LE, 0}) == CL_INVALID_DEVICE);              // empty list
    CHECK(parse({T, B, L, A, Bd, LE, 0}, {dev_a, dev_b}) == CL_INVALID_DEVICE);  // two devices
    CHECK(parse({T, B, L, Bd, LE, 0}, {dev_a}) == CL_INVALID_DEVICE);  // not in the context
    CHECK(parse({T, B, X, CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR, XE, 0}) == CL_INVALID_PROPERTY);
    CHECK(parse({T, B, X, SYNC, XE, 0}, {dev_a}, false) == CL_INVALID_DEVICE);  // nothing to signal a sync_file
}
