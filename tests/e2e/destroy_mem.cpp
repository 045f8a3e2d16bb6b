#include "destroy_mem.hpp"

#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <chrono>
#include <thread>

namespace e2e {

void destroy(const ClEnv &env, cl_mem mem) {
    static std::atomic<int> gone{0};
    gone = 0;
    REQUIRE(clSetMemObjectDestructorCallback(mem, [](cl_mem, void *) { gone++; }, nullptr) == CL_SUCCESS);
    REQUIRE(clReleaseMemObject(mem) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    for (int i = 0; i < 500 && gone == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    REQUIRE(gone == 1);
}

}  // namespace e2e
