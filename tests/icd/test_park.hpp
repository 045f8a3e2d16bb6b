// The test ICD's park points (tests/icd/park.cpp) as a test drives them:
// arm one function, wait until a call of it stopped inside the ICD, let it go.
#pragma once

#include <catch2/catch_test_macros.hpp>
#include <chrono>
#include <cstring>
#include <thread>

#include "test_fixture.hpp"

namespace testicd_test {

constexpr cl_platform_info kPark = 0x7E60, kParked = 0x7E61, kUnpark = 0x7E62;  // tests/icd/testicd.hpp

inline void park(const Env &env, const char *function) {
    REQUIRE(clGetPlatformInfo(env.platform, kPark, std::strlen(function) + 1, const_cast<char *>(function),
                              nullptr) == CL_SUCCESS);
}
inline bool wait_parked(const Env &env) {
    for (int i = 0; i < 10000; ++i) {
        cl_uint parked = 0;
        if (clGetPlatformInfo(env.platform, kParked, sizeof parked, &parked, nullptr) == CL_SUCCESS && parked)
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
}
inline void unpark(const Env &env) {
    REQUIRE(clGetPlatformInfo(env.platform, kUnpark, 0, nullptr, nullptr) == CL_SUCCESS);
}

}  // namespace testicd_test
