// A test case's base that skips it where no dma-buf exporter is at hand:
// as a base it runs before the members are made (a ClEnv, imports).
#pragma once

#include <catch2/catch_test_macros.hpp>

#include "test_dmabufs.hpp"

namespace e2e {

struct NeedsDmabuf {
    NeedsDmabuf() { REQUIRE_DMABUF(); }
};

}  // namespace e2e
