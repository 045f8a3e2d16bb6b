// Property-list classification (layer/import/request.hpp): what is ours,
// what the ICD must still see, and the spec's CL_INVALID_PROPERTY cases.
#include <catch2/catch_test_macros.hpp>

#include <iterator>
#include <string>
#include <utility>
#include <variant>

#include "CL/cl_ext_cldmabuf.h"
#include "layer/import/request.hpp"

using namespace cldmabuf;

namespace {
const cl_mem_properties DMABUF = CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR;
const cl_mem_properties LIST = CL_MEM_DEVICE_HANDLE_LIST_KHR;
cl_mem_properties dev(uintptr_t v) { return static_cast<cl_mem_properties>(v); }

MemRequest classify(std::vector<cl_mem_properties> p, RequestKind kind = RequestKind::buffer) {
    return classify_mem_request(p.data(), kind);
}

// The dma-buf import `r` holds (a failed REQUIRE otherwise).
DmabufRequest dmabuf(MemRequest r) {
    REQUIRE(std::holds_alternative<DmabufRequest>(r));
    return std::get<DmabufRequest>(std::move(r));
}

// The refusal `r` holds: its code, and its reason non-empty.
RefusedRequest refusal(MemRequest r) {
    REQUIRE(std::holds_alternative<RefusedRequest>(r));
    auto out = std::get<RefusedRequest>(std::move(r));
    CHECK_FALSE(out.why.empty());
    return out;
}
}  // namespace

TEST_CASE("ordinary property lists are not ours") {
    CHECK(std::holds_alternative<NotOurs>(classify_mem_request(nullptr, RequestKind::buffer)));
    CHECK(std::holds_alternative<NotOurs>(classify({0})));
    CHECK(std::holds_alternative<NotOurs>(classify({0x4216 /* CL_MEM_CHANNEL_INTEL */, 1, 0})));
    // A repeated entry of the ICD's own is the ICD's to refuse.
    CHECK(std::holds_alternative<NotOurs>(classify({0x4216, 1, 0x4216, 2, 0})));
    // The layer's image entries without a handle: the ICD refuses them.
    CHECK(std::holds_alternative<NotOurs>(classify({CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF, 0, 0}, RequestKind::image)));
    CHECK(std::holds_alternative<DmabufRequest>(classify({0x4216, 1, DMABUF, 5, 0})));
}

TEST_CASE("a dma-buf handle with a device list is split from the ICD's properties") {
    const std::vector<cl_mem_properties> props = {0x4216, 3, DMABUF, 7, LIST, dev(0x10), dev(0x20), 0, 0};
    const DmabufRequest out = dmabuf(classify(props));
    CHECK(out.fd == 7);
    CHECK(out.has_device_list);
    CHECK(out.devices == std::vector<cl_device_id>{reinterpret_cast<cl_device_id>(0x10),
                                                   reinterpret_cast<cl_device_id>(0x20)});
    CHECK(out.passthrough == std::vector<cl_mem_properties>{0x4216, 3, 0});
    CHECK(out.original == props);
    CHECK_FALSE(out.names_layer_properties);
}

TEST_CASE("only the handle: nothing is left for the ICD") {
    const DmabufRequest out = dmabuf(classify({DMABUF, 0, 0}));  // fd 0 is a valid fd number
    CHECK(out.fd == 0);
    CHECK(out.passthrough.empty());
}

TEST_CASE("CL_INVALID_PROPERTY cases, each with a reason") {
    auto refused = [](std::vector<cl_mem_properties> p) { return refusal(classify(std::move(p))); };
    CHECK(refused({DMABUF, static_cast<cl_mem_properties>(-1), 0}).why.find("not a valid fd") != std::string::npos);
    CHECK(refused({DMABUF, 1ull << 40, 0}).err == CL_INVALID_PROPERTY);
    CHECK(refused({DMABUF, 3, DMABUF, 4, 0}).why.find("twice") != std::string::npos);
    CHECK(refused({DMABUF, 3, 0x2060, 4, 0}).why.find("more than one") != std::string::npos);
    CHECK(refused({LIST, dev(0x10), 0, 0}).why.find("without") != std::string::npos);
    CHECK(refused({DMABUF, 3, LIST, 0, 0}).why.find("no device") != std::string::npos);
    CHECK(refused({DMABUF, 3, 0x4216, 1, 0x4216, 2, 0}).why.find("twice") != std::string::npos);
    // The first bad entry in list order decides the reason.
    CHECK(refused({DMABUF, static_cast<cl_mem_properties>(-1), LIST, 0, 0}).why.find("not a valid fd") !=
          std::string::npos);
}

TEST_CASE("a first handle of another type is the ICD's, with the devices it names") {
    const MemRequest r = classify({LIST, dev(0x10), 0, 0x2061, 3, DMABUF, 4, 0});
    REQUIRE(std::holds_alternative<IcdHandleRequest>(r));
    const auto &icd = std::get<IcdHandleRequest>(r);
    CHECK(icd.type == 0x2061);
    CHECK(icd.has_device_list);
    CHECK(icd.devices == std::vector<cl_device_id>{reinterpret_cast<cl_device_id>(0x10)});
    // Whatever else the list holds: the ICD decides.
    CHECK(std::holds_alternative<IcdHandleRequest>(classify({0x2060, 3, 0x2060, 4, 0})));
}

TEST_CASE("an allocation: its exporter, the rest for the import, refused with a handle or twice") {
    const std::vector<cl_mem_properties> props = {0x4216, 1, CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, 2, LIST, dev(0x10), 0, 0};
    const MemRequest r = classify(props);
    REQUIRE(std::holds_alternative<AllocationRequest>(r));
    const auto &a = std::get<AllocationRequest>(r);
    CHECK(a.exporter == 2);
    CHECK(a.original == props);
    CHECK(a.rest == std::vector<cl_mem_properties>{0x4216, 1, LIST, dev(0x10), 0});
    CHECK(a.import.passthrough == std::vector<cl_mem_properties>{0x4216, 1, 0});
    CHECK(a.import.devices == std::vector<cl_device_id>{reinterpret_cast<cl_device_id>(0x10)});

    const std::vector<std::vector<cl_mem_properties>> bad_lists = {
        {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, 1, CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, 1, 0},
        {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, 1, DMABUF, 3, 0},
        {0x2060, 3, CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, 1, 0},
        {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, 1, LIST, 0, 0},
        {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, 1, 0x4216, 1, 0x4216, 1, 0}};
    for (const auto &bad : bad_lists) {
        const RefusedRequest refused = refusal(classify(bad));
        CHECK(refused.err == CL_INVALID_PROPERTY);
        CHECK(refused.allocation);
    }
}

TEST_CASE("one walk per classification") {
    const uint64_t before = property_walks().load();
    (void)classify({0x4216, 1, DMABUF, 5, LIST, dev(0x10), 0, CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF, 0, 0},
                   RequestKind::image);
    CHECK(property_walks().load() == before + 1);
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
    const DmabufRequest looks_like_layer =
        dmabuf(classify({DMABUF, 3, LIST, dev(CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF), 0, 0}));
    CHECK_FALSE(looks_like_layer.names_layer_properties);
    CHECK(dmabuf(classify({DMABUF, 3, CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF, 4096, 0})).names_layer_properties);
}

TEST_CASE("image requests take the layer's entries; buffer requests leave them to the ICD") {
    const std::vector<cl_mem_properties> props = {DMABUF,
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
    const DmabufRequest image = dmabuf(classify(props, RequestKind::image));
    CHECK(image.fd == 5);
    CHECK(image.layer.plane_offset == 8192);
    CHECK(image.layer.has_modifier);
    CHECK(image.layer.modifier == 0x0100000000000001ull);
    CHECK(image.layer.allow_tiled);
    CHECK_FALSE(image.layer.assume_linear);
    CHECK(image.passthrough == std::vector<cl_mem_properties>{0x4216, 1, 0});
    // CL_MEM_PROPERTIES answers the caller's whole list, the layer's entries included.
    CHECK(image.original == props);

    const DmabufRequest buffer = dmabuf(classify(props, RequestKind::buffer));
    CHECK_FALSE(buffer.layer.has_modifier);
    CHECK(buffer.names_layer_properties);
    CHECK(buffer.passthrough.size() == 9);  // three layer pairs, the ICD's pair, the 0
}

TEST_CASE("the layer's image properties: CL_INVALID_PROPERTY cases") {
    auto image = [](std::vector<cl_mem_properties> p) { return classify(std::move(p), RequestKind::image); };
    CHECK(refusal(image({DMABUF, 3, CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF, 2, 0})).why.find("CL_TRUE or CL_FALSE") !=
          std::string::npos);
    CHECK(refusal(image({DMABUF, 3, CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF, 7, 0})).err == CL_INVALID_PROPERTY);
    CHECK(refusal(image({DMABUF, 3, CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF, 0, CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF,
                         64, 0}))
              .why.find("twice") != std::string::npos);
    CHECK(std::holds_alternative<DmabufRequest>(image({DMABUF, 3, CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF, CL_FALSE, 0})));
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
