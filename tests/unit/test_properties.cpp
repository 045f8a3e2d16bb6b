// Property-list parsing: what is ours, what the ICD must still see, and the
// spec's CL_INVALID_PROPERTY cases.
#include <catch2/catch_test_macros.hpp>

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
