// Where the end-to-end tests get their dma-bufs.
//
// CLDMABUF_TEST_DMABUF=heap|udmabuf|vgem|sim picks the exporter; unset, the
// first available one is used.  heap/udmabuf/vgem are real kernel exporters
// (the VM lane); "sim" is the virtual Gen9 (libvgen9.so via LD_PRELOAD),
// whose PRIME exports behave as dma-bufs on a host without any.
#pragma once

#include <cstddef>
#include <string>

#include "dmabuf_source.hpp"

namespace e2e {

using cldmabuf::test::Dmabuf;

// Name of the source in use, or empty when this machine has none.
const std::string &dmabuf_source();
bool have_dmabuf();
bool source_has_fences();  // vgem only
Dmabuf make_dmabuf(size_t size);

}  // namespace e2e

// Skip a test that needs a dma-buf when none exists here (the VM lane runs it).
#define REQUIRE_DMABUF()                                                       \
    do {                                                                       \
        if (!e2e::have_dmabuf()) SKIP("no dma-buf exporter on this machine"); \
    } while (0)
