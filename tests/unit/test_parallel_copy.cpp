// layer/parallel_copy: bytes land exactly, at every size around the
// thresholds, and the helper threads go away when idle.
#include <catch2/catch_test_macros.hpp>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "layer/handoff/parallel_copy.hpp"

using namespace cldmabuf;

TEST_CASE("parallel_copy copies every byte at sizes around its thresholds", "[parallel]") {
    std::mt19937 rng(11);
    constexpr size_t MiB = 1u << 20;
    for (size_t len : {size_t(0), size_t(1), 2 * MiB - 1, 2 * MiB, 2 * MiB + 1, 3 * MiB + 4095, 37 * MiB + 123}) {
        INFO("len " << len);
        std::vector<uint8_t> src(len + 2), dst(len + 2, 0xEE);
        for (auto &b : src) b = uint8_t(rng());
        parallel_copy(dst.data() + 1, src.data() + 1, len);
        CHECK(dst[0] == 0xEE);  // nothing written before the range
        CHECK(dst[len + 1] == 0xEE);  // nor after it
        CHECK(std::equal(src.begin() + 1, src.begin() + 1 + len, dst.begin() + 1));
    }
}

TEST_CASE("parallel_copy from several threads at once", "[parallel]") {
    constexpr size_t len = 9u << 20;
    std::vector<std::vector<uint8_t>> src(4, std::vector<uint8_t>(len)), dst(4, std::vector<uint8_t>(len));
    for (int t = 0; t < 4; ++t)
        for (size_t i = 0; i < len; ++i) src[t][i] = uint8_t(i * 31 + t);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int round = 0; round < 5; ++round) parallel_copy(dst[t].data(), src[t].data(), len);
        });
    for (auto &th : threads) th.join();
    for (int t = 0; t < 4; ++t) CHECK(dst[t] == src[t]);
}

TEST_CASE("parallel_copy's helper threads end once idle", "[parallel]") {
    std::vector<uint8_t> src(8u << 20, 1), dst(8u << 20);
    parallel_copy(dst.data(), src.data(), src.size());
    if (copy_threads() > 1) CHECK(live_copy_threads() >= 1);  // unit-parallel-copy runs with 4
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (live_copy_threads() && std::chrono::steady_clock::now() < end)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(live_copy_threads() == 0);
}
