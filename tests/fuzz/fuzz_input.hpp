// Helpers shared by the fuzz targets: turn libFuzzer's bytes into the
// numbers an API call takes, picking from the values that matter (names the
// layer knows, limits, boundaries) more often than raw 64-bit noise, so the
// search reaches the interesting branches in seconds.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <initializer_list>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

namespace fuzz {

// One of `table`, or (one time in four) any 64-bit value.
inline uint64_t pick(FuzzedDataProvider &in, std::initializer_list<uint64_t> table) {
    const uint8_t sel = in.ConsumeIntegral<uint8_t>();
    if (sel % 4 == 3 || table.size() == 0) return in.ConsumeIntegral<uint64_t>();
    return table.begin()[(sel / 4) % table.size()];
}

// A size: mostly small (0..max), sometimes a boundary, sometimes huge.
inline uint64_t size(FuzzedDataProvider &in, uint64_t max) {
    switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: return pick(in, {0, 1, 2, 3, 4, 63, 64, 65, 127, 128, 511, 512, 4095, 4096, 32764, 32767, 32768,
                             65535, 65536, UINT32_MAX, INT64_MAX, UINT64_MAX, UINT64_MAX / 2 + 1});
    default: return in.ConsumeIntegralInRange<uint64_t>(0, max);
    }
}

// A violated property: print it and abort, so libFuzzer keeps the input.
[[noreturn]] inline void fail(const char *what, const char *file, int line) {
    std::fprintf(stderr, "fuzz: property violated at %s:%d: %s\n", file, line, what);
    std::abort();
}

}  // namespace fuzz

#define FUZZ_ASSERT(cond)                                   \
    do {                                                    \
        if (!(cond)) fuzz::fail(#cond, __FILE__, __LINE__); \
    } while (0)
