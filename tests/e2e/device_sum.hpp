// A kernel's sum of a buffer import's 32-bit words: the device reads through
// whatever the import gave it (its mapping, or the copy route's buffer).
// Shared by the mapping-cache and fd-ownership tests.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cl_fixture.hpp"

namespace e2e {

// Acquires `mem`, sums its first `count` words on the device, releases it
// (each step REQUIREd).  With `result`, the one-ulong result buffer is handed
// to the caller (who releases it) instead of released here.
uint64_t device_sum(const ClEnv &env, cl_mem mem, size_t count, cl_mem *result = nullptr);

}  // namespace e2e
