// layer/handoff/failed_acquire_shield: a failed acquire's imports are detached
// (anonymous pages MAP_FIXED over their mapping) and mapped again only when
// every queue behind the failure was drained, or at teardown.  The queues
// it holds meanwhile are counted: each reference it takes it gives back.
#include <catch2/catch_test_macros.hpp>

#include <sys/mman.h>

#include <map>
#include <vector>

#include "fake_kernel.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/core/worker.hpp"
#include "layer/handoff/failed_acquire_shield.hpp"
#include "layer/core/import_state.hpp"
#include "layer/core/registry.hpp"

using namespace cldmabuf;

namespace {

struct MmapCall {
    void *addr;
    size_t len;
    int prot, flags, fd;
};

struct RecordingKernel : unit::FakeKernel {
    std::vector<MmapCall> maps;
    bool fail = false;
    void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t) override {
        maps.push_back({addr, len, prot, flags, fd});
        if (fail) {
            errno = ENOMEM;
            return MAP_FAILED;
        }
        return addr;
    }
};

cl_command_queue queue(uintptr_t n) { return reinterpret_cast<cl_command_queue>(n); }

// The references the shield holds on each queue (retains minus releases).
std::map<cl_command_queue, int> held;
cl_int CL_API_CALL count_retain(cl_command_queue q) { return ++held[q], CL_SUCCESS; }
cl_int CL_API_CALL count_release(cl_command_queue q) { return --held[q], CL_SUCCESS; }

struct CountedQueues {
    cl_icd_dispatch saved;
    CountedQueues() {
        saved = dispatch_tables::guarded_next;
        dispatch_tables::guarded_next.clRetainCommandQueue = count_retain;
        dispatch_tables::guarded_next.clReleaseCommandQueue = count_release;
        held.clear();
    }
    ~CountedQueues() { dispatch_tables::guarded_next = saved; }
    int on(uintptr_t n) {
        shutdown_worker();  // a teardown releases on the queue's worker
        return held[queue(n)];
    }
};

Import make_import(void *mapping, bool writable) {
    Import import;
    import.fd = 42;
    import.mapping = mapping;
    import.mapping_len = 8192;
    import.mapped_writable = writable;
    return import;
}

}  // namespace

TEST_CASE("a failed acquire detaches the mapping until every queue behind it is drained") {
    RecordingKernel k;
    unit::ScopedKernel scoped(&k);
    CountedQueues counted;
    alignas(4096) static char pages[8192];
    Import import = make_import(pages, true);

    REQUIRE(shield_import(import, queue(1)));
    REQUIRE(k.maps.size() == 1);
    CHECK(k.maps[0].addr == pages);
    CHECK(k.maps[0].len == 8192);
    CHECK(k.maps[0].prot == (PROT_READ | PROT_WRITE));
    CHECK(k.maps[0].flags == (MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED));
    CHECK(import_shielded(import));
    // A second failure on another queue: no second mmap, both queues owed.
    REQUIRE(shield_import(import, queue(2)));
    CHECK(k.maps.size() == 1);
    CHECK(shield_queues(import) == std::vector<cl_command_queue>{queue(1), queue(2)});
    CHECK(counted.on(1) == 1);
    CHECK(counted.on(2) == 1);

    queue_drained(queue(1));
    CHECK(counted.on(1) == 0);
    CHECK(import_shielded(import));  // queue 2 may still run on the pages
    CHECK(k.maps.size() == 1);
    // An acquire on queue 3 that drained nothing: refused, still detached.
    CHECK_FALSE(reattach_import(import, queue(3), {}));
    CHECK(import_shielded(import));
    // One that drained queue 2: the dma-buf is mapped again.
    CHECK(reattach_import(import, queue(3), {queue(2)}));
    CHECK(counted.on(2) == 0);
    CHECK(counted.on(3) == 0);
    REQUIRE(k.maps.size() == 2);
    CHECK(k.maps[1].addr == pages);
    CHECK(k.maps[1].flags == (MAP_SHARED | MAP_FIXED));
    CHECK(k.maps[1].fd == 42);
    CHECK_FALSE(import_shielded(import));
    CHECK_FALSE(any_import_shielded());
    CHECK(reattach_import(import, queue(3), {}));  // nothing to do
}

TEST_CASE("a detached mapping comes back on clFinish of its one queue, and at teardown") {
    RecordingKernel k;
    unit::ScopedKernel scoped(&k);
    CountedQueues counted;
    alignas(4096) static char pages[8192];
    Import a = make_import(pages, false), b = make_import(pages + 4096, true);
    REQUIRE(shield_import(a, queue(1)));
    CHECK(k.maps[0].prot == PROT_READ);  // a read-only import keeps its protection
    queue_drained(queue(1));
    REQUIRE(k.maps.size() == 2);
    CHECK(k.maps[1].flags == (MAP_SHARED | MAP_FIXED));
    CHECK(k.maps[1].prot == PROT_READ);
    CHECK_FALSE(import_shielded(a));

    REQUIRE(shield_import(b, queue(1)));
    CHECK(counted.on(1) == 1);
    forget_import_state(b);  // teardown: mapped again before the mapping is released
    CHECK(counted.on(1) == 0);
    REQUIRE(k.maps.size() == 4);
    CHECK(k.maps[3].flags == (MAP_SHARED | MAP_FIXED));
    CHECK_FALSE(import_shielded(b));
    CHECK_FALSE(any_import_shielded());
}

TEST_CASE("nothing is detached without a mapping, or when mmap refuses") {
    RecordingKernel k;
    unit::ScopedKernel scoped(&k);
    CountedQueues counted;
    Import none = make_import(nullptr, true);
    CHECK_FALSE(shield_import(none, queue(1)));
    CHECK(k.maps.empty());
    alignas(4096) static char pages[8192];
    Import import = make_import(pages, true);
    k.fail = true;
    CHECK_FALSE(shield_import(import, queue(1)));
    CHECK_FALSE(import_shielded(import));
    CHECK(counted.on(1) == 0);
}
