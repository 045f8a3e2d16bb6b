// Property-list parsing: what is ours, what the ICD must still see, and the
// spec's CL_INVALID_PROPERTY cases.
#include <catch2/catch_test_macros.hpp>

#include <iterator>
#include <string>
#include <utility>

#include "CL/cl_ext_cldmabuf.h"
#include "layer/import/request.hpp"

using namespace cldmabuf;

namespace {
const cl_mem_properties DMABUF = CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR;
const cl_mem_properties LIST = CL_MEM_DEVICE_HANDLE_LIST_KHR;
cl_mem_properties dev(uintptr_t v) { return static_cast<cl_mem_properties>(v); }
}  // namespace

TEST_CASE("ordinary property lists are not ours") {
    CHECK_FALSE(mentions_external_memory(nullptr));
    const cl_mem_properties empty[] = {0};
    CHECK_FALSE(mentions_external_memory(empty));
    const cl_mem_properties intel[] = {0x4216 /* CL_MEM_CHANNEL_INTEL */, 1, 0};
    CHECK_FALSE(mentions_external_memory(intel));
    const cl_mem_properties ours[] = {0x4216, 1, DMABUF, 5, 0};
    CHECK(mentions_external_memory(ours));
}

TEST_CASE("a dma-buf handle with a device list is split from the ICD's properties") {
    const cl_mem_properties props[] = {0x4216, 3, DMABUF, 7, LIST, dev(0x10), dev(0x20), 0, 0};
    ImportProperties out;
    std::string why;
    REQUIRE(parse_import_properties(props, &out, &why) == CL_SUCCESS);
    CHECK(out.has_handle);
    CHECK(out.fd == 7);
    CHECK(out.has_device_list);
    CHECK(out.devices == std::vector<cl_device_id>{reinterpret_cast<cl_device_id>(0x10),
                                                   reinterpret_cast<cl_device_id>(0x20)});
    CHECK(out.passthrough == std::vector<cl_mem_properties>{0x4216, 3, 0});
    CHECK(out.original == std::vector<cl_mem_properties>(props, props + 9));
}

TEST_CASE("only the handle: nothing is left for the ICD") {
    const cl_mem_properties props[] = {DMABUF, 0, 0};  // fd 0 is a valid fd number
    ImportProperties out;
    std::string why;
    REQUIRE(parse_import_properties(props, &out, &why) == CL_SUCCESS);
    CHECK(out.fd == 0);
    CHECK(out.passthrough.empty());
}

TEST_CASE("CL_INVALID_PROPERTY cases, each with a reason") {
    ImportProperties out;
    std::string why;
    auto parse = [&](std::vector<cl_mem_properties> p) {
        why.clear();
        return parse_import_properties(p.data(), &out, &why);
    };
    CHECK(parse({DMABUF, static_cast<cl_mem_properties>(-1), 0}) == CL_INVALID_PROPERTY);
    CHECK(why.find("not a valid fd") != std::string::npos);
    CHECK(parse({DMABUF, 1ull << 40, 0}) == CL_INVALID_PROPERTY);
    CHECK(parse({DMABUF, 3, DMABUF, 4, 0}) == CL_INVALID_PROPERTY);
    CHECK(why.find("twice") != std::string::npos);
    CHECK(parse({DMABUF, 3, 0x2060, 4, 0}) == CL_INVALID_PROPERTY);
    CHECK(why.find("more than one") != std::string::npos);
    CHECK(parse({0x2061, 3, 0}) == CL_INVALID_PROPERTY);
    CHECK(why.find("not supported") != std::string::npos);
    CHECK(parse({LIST, dev(0x10), 0, 0}) == CL_INVALID_PROPERTY);
    CHECK(why.find("without") != std::string::npos);
    CHECK(parse({DMABUF, 3, LIST, 0, 0}) == CL_INVALID_PROPERTY);
    CHECK(why.find("no device") != std::string::npos);
    CHECK(parse({0x4216, 1, 0x4216, 2, 0}) == CL_INVALID_PROPERTY);
}

// ---- the one walker (layer/import/request.hpp) -------------------------------

TEST_CASE("the walker steps over a device list as one entry, ARM lists as pairs") {
    const cl_mem_properties props[] = {LIST, dev(0x10), dev(0x20), 0, DMABUF, 7, 0x4216, 1, 0};
    std::vector<std::pair<cl_mem_properties, size_t>> seen;
    const cl_mem_properties *end = walk_properties(props, [&](const cl_mem_properties *p, size_t words) {
        seen.emplace_back(p[0], words);
        return true;
    });
    CHECK(seen == std::vector<std::pair<cl_mem_properties, size_t>>{{LIST, 4}, {DMABUF, 2}, {0x4216, 2}});
    CHECK(end == props + 8);

    // A stop leaves the walk at that entry.
    CHECK(walk_properties(props, [](const cl_mem_properties *p, size_t) { return p[0] != DMABUF; }) == props + 4);

    // clImportMemoryARM lists have no device list: 0x2051 there is a plain key.
    const cl_import_properties_arm arm[] = {0x2051, 0, 0x40B2, 0x40B4, 0};
    size_t pairs = 0;
    walk_properties(arm, [&](const cl_import_properties_arm *, size_t words) {
        pairs += words == 2;
        return true;
    });
    CHECK(pairs == 2);
}

TEST_CASE("a device handle inside a device list is never read as a property name") {
    const cl_mem_properties looks_like_layer[] = {DMABUF, 3, LIST, dev(CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF), 0, 0};
    CHECK_FALSE(uses_layer_properties(looks_like_layer));
    const cl_mem_properties layer[] = {DMABUF, 3, CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF, 4096, 0};
    CHECK(uses_layer_properties(layer));
}

TEST_CASE("image requests take the layer's entries; buffer requests leave them to the ICD") {
    const cl_mem_properties props[] = {DMABUF,
                                       5,
                                       CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF,
                                       8192,
                                       CL_MEM_DMA_BUF_MODIFIER_CLDMABUF,
                                       0x0100000000000001ull,
                                       CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF,
                                       CL_TRUE,
                                       0x4216,
                                       1,
                                       0};
    ImportProperties image;
    std::string why;
    REQUIRE(parse_import_request(props, RequestKind::image, &image, &why) == CL_SUCCESS);
    CHECK(image.fd == 5);
    CHECK(image.layer.plane_offset == 8192);
    CHECK(image.layer.has_modifier);
    CHECK(image.layer.modifier == 0x0100000000000001ull);
    CHECK(image.layer.allow_tiled);
    CHECK_FALSE(image.layer.assume_linear);
    CHECK(image.passthrough == std::vector<cl_mem_properties>{0x4216, 1, 0});
    // CL_MEM_PROPERTIES answers the caller's whole list, the layer's entries included.
    CHECK(image.original == std::vector<cl_mem_properties>(std::begin(props), std::end(props)));

    ImportProperties buffer;
    REQUIRE(parse_import_request(props, RequestKind::buffer, &buffer, &why) == CL_SUCCESS);
    CHECK_FALSE(buffer.layer.has_modifier);
    CHECK(buffer.passthrough.size() == 9);  // three layer pairs, the ICD's pair, the 0
}

TEST_CASE("the layer's image properties: CL_INVALID_PROPERTY cases") {
    ImportProperties out;
    std::string why;
    auto parse = [&](std::vector<cl_mem_properties> p) {
        why.clear();
        return parse_import_request(p.data(), RequestKind::image, &out, &why);
    };
    CHECK(parse({DMABUF, 3, CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF, 2, 0}) == CL_INVALID_PROPERTY);
    CHECK(why.find("CL_TRUE or CL_FALSE") != std::string::npos);
    CHECK(parse({DMABUF, 3, CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF, 7, 0}) == CL_INVALID_PROPERTY);
    CHECK(parse({DMABUF, 3, CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF, 0, CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF, 64, 0}) ==
          CL_INVALID_PROPERTY);
    CHECK(why.find("twice") != std::string::npos);
    CHECK(parse({DMABUF, 3, CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF, CL_FALSE, 0}) == CL_SUCCESS);
}

TEST_CASE("an import's flags: the Memory Flags table's exclusions, asked by the layer") {
    std::string why;
    for (cl_mem_flags ok : {cl_mem_flags{0}, cl_mem_flags{CL_MEM_READ_WRITE}, cl_mem_flags{CL_MEM_READ_ONLY},
                            cl_mem_flags{CL_MEM_WRITE_ONLY | CL_MEM_HOST_READ_ONLY},
                            cl_mem_flags{CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS},
                            cl_mem_flags{CL_MEM_READ_ONLY | (cl_mem_flags{1} << 26)}}) {  // a vendor bit: the ICD's
        INFO(ok);
        CHECK(check_import_flags(ok, &why) == CL_SUCCESS);
    }
    for (cl_mem_flags bad : {cl_mem_flags{CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY},
                             cl_mem_flags{CL_MEM_READ_WRITE | CL_MEM_READ_ONLY},
                             cl_mem_flags{CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY},
                             cl_mem_flags{CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_READ_ONLY},
                             cl_mem_flags{CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR},
                             cl_mem_flags{CL_MEM_ALLOC_HOST_PTR}, cl_mem_flags{CL_MEM_COPY_HOST_PTR}}) {
        INFO(bad);
        why.clear();
        CHECK(check_import_flags(bad, &why) == CL_INVALID_VALUE);
        CHECK_FALSE(why.empty());
    }
}
