// layer/dmabuf/mapping_cache: a parked mapping goes to the next import of the
// same memory only, never to a live import's twin, never to a new buffer
// that got a freed buffer's inode number, and goes once only the cache
// holds its dma-buf.
//
// The fake kernel below keeps real memfds (real mappings, real bytes) but
// numbers the files itself the way a kernel may: a file's inode number is
// free again the moment its last fd closes (mappings hold no reference, as
// with i915's dma-buf mmap), and the lowest free number is given next.  It
// prints a dma-buf's fdinfo "count:" (its fds) as dma_buf_show_fdinfo does.
// Locked: the cache's reaper thread reads fdinfo and closes fds meanwhile.
#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <memory>
#include <thread>

#include "fake_kernel.hpp"
#include "layer/dmabuf/mapping_cache.hpp"

using namespace cldmabuf;

namespace {

struct RecyclingKernel : unit::FakeKernel {
    std::mutex mu;
    std::map<int, int> file_of;  // fd -> file id (its inode number)
    std::set<int> taken;

    int ino_of(int fd) {
        std::lock_guard lock(mu);
        return file_of.at(fd);
    }
    bool is_taken(int ino) {
        std::lock_guard lock(mu);
        return taken.count(ino) != 0;
    }
    int open_file(size_t size, char content) {
        std::lock_guard lock(mu);
        int ino = 1;
        while (taken.count(ino)) ++ino;
        taken.insert(ino);
        const int fd = ::memfd_create("mapcache-test", MFD_CLOEXEC);
        REQUIRE(fd >= 0);
        REQUIRE(::ftruncate(fd, static_cast<off_t>(size)) == 0);
        void *p = ::mmap(nullptr, size, PROT_WRITE, MAP_SHARED, fd, 0);
        REQUIRE(p != MAP_FAILED);
        std::memset(p, content, size);
        ::munmap(p, size);
        file_of[fd] = ino;
        return fd;
    }
    long fds_of(int ino) const {
        long n = 0;
        for (auto &[fd, f] : file_of) n += f == ino;
        return n;
    }
    int close(int fd) override {
        std::lock_guard lock(mu);
        auto it = file_of.find(fd);
        if (it == file_of.end()) return ::close(fd);
        const int ino = it->second;
        file_of.erase(it);
        if (!fds_of(ino)) taken.erase(ino);  // free: the number may be given again
        return ::close(fd);
    }
    int dup(int fd) override {
        std::lock_guard lock(mu);
        const int d = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (d >= 0 && file_of.count(fd)) file_of[d] = file_of[fd];
        return d;
    }
    void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) override {
        return ::mmap(addr, len, prot, flags, fd, off);
    }
    int munmap(void *addr, size_t len) override { return ::munmap(addr, len); }
    int fstat(int fd, struct stat *st) override {
        std::lock_guard lock(mu);
        if (::fstat(fd, st) != 0) return -1;
        st->st_dev = 77;
        st->st_ino = static_cast<ino_t>(file_of.at(fd));
        return 0;
    }
    int read_file(const char *path, std::string *out) override {
        const int fd = std::atoi(std::strrchr(path, '/') + 1);
        std::lock_guard lock(mu);
        if (!file_of.count(fd)) {
            errno = ENOENT;
            return -1;
        }
        *out = "size:\t0\ncount:\t" + std::to_string(fds_of(file_of[fd])) + "\nexp_name:\ti915\n";
        return 0;
    }
};

struct Mapping {
    void *addr = nullptr;
    size_t len = 0;
    char first() const { return *static_cast<const char *>(addr); }
};

Mapping take(int fd, size_t len) {
    Mapping m;
    m.addr = acquire_mapping(fd, len, true, &m.len);
    REQUIRE(m.addr != MAP_FAILED);
    return m;
}

void give(const Mapping &m) { release_mapping(m.addr, m.len); }

// Past the cache's look at who else holds its parked dma-bufs (every 50 ms).
void after_a_sweep_interval() { std::this_thread::sleep_for(std::chrono::milliseconds(150)); }

}  // namespace

TEST_CASE("mapping cache: a re-import takes the parked mapping; a live import's twin gets its own", "[mapcache]") {
    RecyclingKernel k;
    unit::ScopedKernel scope(&k);
    drop_idle_mappings();
    const int fd = k.open_file(8192, 'a');
    const Mapping first = take(fd, 8192);
    const Mapping twin = take(fd, 8192);
    CHECK(twin.addr != first.addr);  // one mapping per live import
    give(first);
    give(twin);
    const auto before = mapping_cache_stats();
    CHECK(before.parked == 2);
    const Mapping again = take(fd, 8192);
    CHECK((again.addr == first.addr || again.addr == twin.addr));
    CHECK(mapping_cache_stats().hits == before.hits + 1);
    give(again);
    k.close(fd);
    drop_idle_mappings();
    CHECK(mapping_cache_stats().parked == 0);
}

TEST_CASE("mapping cache: a freed buffer's inode number, given to a new buffer, never finds the old mapping",
          "[mapcache]") {
    RecyclingKernel k;
    unit::ScopedKernel scope(&k);
    drop_idle_mappings();
    const int a = k.open_file(4096, 'a');
    const int a_ino = k.ino_of(a);
    give(take(a, 4096));
    k.close(a);  // the producer frees its buffer; only the cache may hold it now

    // New buffers of the same size and of another size, other content: if
    // one gets a's number, the cache must not hand it a's pages.
    for (const auto &[size, content] : {std::pair<size_t, char>{4096, 'b'}, {8192, 'c'}, {4096, 'd'}}) {
        const int fd = k.open_file(size, content);
        INFO("new buffer of " << size << " bytes, inode " << k.ino_of(fd) << " (the freed one's was " << a_ino
                              << ")");
        const Mapping m = take(fd, size);
        CHECK(m.first() == content);
        CHECK(static_cast<const char *>(m.addr)[size - 1] == content);
        CHECK(m.len >= size);
        release_mapping(m.addr, m.len, false);
        k.close(fd);
        after_a_sweep_interval();
    }
    drop_idle_mappings();
}

TEST_CASE("mapping cache: a parked mapping goes once only the cache holds its dma-buf", "[mapcache]") {
    RecyclingKernel k;
    unit::ScopedKernel scope(&k);
    drop_idle_mappings();
    const int a = k.open_file(4096, 'a');
    const int a_ino = k.ino_of(a);
    give(take(a, 4096));
    const int other = k.open_file(4096, 'o');
    give(take(other, 4096));
    after_a_sweep_interval();  // looked at: both are still their producer's
    CHECK(mapping_cache_stats().parked == 2);
    CHECK(k.is_taken(a_ino));

    const uint64_t gone = mapping_cache_stats().gone;
    k.close(a);  // the producer lets go
    CHECK(k.is_taken(a_ino));  // the cache's own fd keeps the number taken
    after_a_sweep_interval();  // with no call into the cache meanwhile
    CHECK(mapping_cache_stats().gone == gone + 1);
    CHECK(mapping_cache_stats().parked == 1);
    CHECK_FALSE(k.is_taken(a_ino));  // freed: the cache held the last reference
    k.close(other);
    drop_idle_mappings();
}

TEST_CASE("mapping cache: the mappings of two imports of one dma-buf, both parked, go once only the cache holds it",
          "[mapcache]") {
    RecyclingKernel k;
    unit::ScopedKernel scope(&k);
    drop_idle_mappings();
    const int fd = k.open_file(4096, 'a');
    const int ino = k.ino_of(fd);
    const Mapping first = take(fd, 4096);
    const Mapping twin = take(fd, 4096);  // a live import's twin: a mapping (and a pin) of its own
    give(first);
    give(twin);
    CHECK(mapping_cache_stats().parked == 2);
    const uint64_t gone = mapping_cache_stats().gone;
    k.close(fd);  // each entry's pin now sees the other's as well as its own
    after_a_sweep_interval();
    CHECK(mapping_cache_stats().gone == gone + 2);
    CHECK(mapping_cache_stats().parked == 0);
    CHECK_FALSE(k.is_taken(ino));
    drop_idle_mappings();
}

TEST_CASE("mapping cache: an identity the caller holds keys the entry as fstat would, and asks the kernel nothing",
          "[mapcache]") {
    RecyclingKernel k;
    unit::ScopedKernel scope(&k);
    drop_idle_mappings();
    const int fd = k.open_file(4096, 'a');
    DmabufIdentity id;
    REQUIRE(dmabuf_identity(fd, &id));
    Mapping first;
    first.addr = acquire_mapping(fd, 4096, true, &first.len, &id);
    REQUIRE(first.addr != MAP_FAILED);
    give(first);
    const uint64_t hits = mapping_cache_stats().hits;
    const Mapping again = take(fd, 4096);  // asked of the kernel this time: the same key
    CHECK(again.addr == first.addr);
    CHECK(mapping_cache_stats().hits == hits + 1);
    give(again);
    DmabufIdentity other = id;
    other.ino += 1000;  // another buffer's identity: never this entry
    Mapping m;
    m.addr = acquire_mapping(fd, 4096, true, &m.len, &other);
    CHECK(m.addr != first.addr);
    release_mapping(m.addr, m.len, false);
    k.close(fd);
    drop_idle_mappings();
}

TEST_CASE("mapping cache: a fork's child sweeps with a reaper of its own", "[mapcache]") {
    RecyclingKernel k;
    unit::ScopedKernel scope(&k);
    drop_idle_mappings();
    const int held = k.open_file(4096, 'h');
    give(take(held, 4096));  // the parent's reaper runs from here
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // No call may fail silently here: the exit status is the verdict.
        const int a = k.open_file(4096, 'a');
        give(take(a, 4096));
        const uint64_t gone = mapping_cache_stats().gone;
        k.close(a);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        _exit(mapping_cache_stats().gone == gone + 1 ? 0 : 1);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);  // 1: the child's parked mapping was never swept
    k.close(held);
    drop_idle_mappings();
}

namespace {

// What the copy route parks with its registration's mapping: records when
// the cache retires it, and whether it was handed the mapping to unmap.
struct RecordingAttachment : MappingAttachment {
    uintptr_t who;
    std::atomic<int> *retired;
    explicit RecordingAttachment(uintptr_t w, std::atomic<int> *r) : who(w), retired(r) {}
    uintptr_t owner() const override { return who; }
    void retire(OwnedMapping map) override {
        CHECK(map);  // handed over to be unmapped here, after what was built over it
        ++*retired;
    }
};

DmabufIdentity identity_of(int fd) {
    DmabufIdentity id;
    REQUIRE(dmabuf_identity(fd, &id));
    return id;
}

}  // namespace

TEST_CASE("mapping cache: an attachment parks with its mapping and comes back to its owner only; it retires "
          "with its dma-buf",
          "[mapcache]") {
    RecyclingKernel k;
    unit::ScopedKernel scope(&k);
    drop_idle_mappings();
    std::atomic<int> retired{0};
    const int fd = k.open_file(8192, 'a');
    const DmabufIdentity id = identity_of(fd);
    const Mapping importer = take(fd, 8192);  // the import's own mapping, live (the share is learned here)
    OwnedMapping reg(::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), 8192);
    REQUIRE(reg);
    void *const reg_addr = reg.get();
    park_mapping(fd, id, std::move(reg), true, std::make_unique<RecordingAttachment>(1, &retired));
    give(importer);
    CHECK(mapping_cache_stats().parked == 2);

    // A plain import never takes it, nor another owner, nor the other protection.
    const Mapping plain = take(fd, 8192);
    CHECK(plain.addr == importer.addr);
    give(plain);
    std::unique_ptr<MappingAttachment> got;
    CHECK_FALSE(take_parked_mapping(id, 8192, true, 2, &got));
    CHECK_FALSE(take_parked_mapping(id, 8192, false, 1, &got));
    CHECK(got == nullptr);
    // Its owner does, out of the cache altogether.
    OwnedMapping back = take_parked_mapping(id, 8192, true, 1, &got);
    CHECK(back.get() == reg_addr);
    REQUIRE(got != nullptr);
    CHECK(got->owner() == 1);
    CHECK(mapping_cache_stats().parked == 1);
    park_mapping(fd, id, std::move(back), true, std::move(got));
    CHECK(retired == 0);

    // The producer frees the buffer: both entries go, the attachment handed its mapping.
    k.close(fd);
    after_a_sweep_interval();
    CHECK(retired == 1);
    CHECK(mapping_cache_stats().parked == 0);

    // Evicted (or the cache emptied) and never parked (over the budget): retired too.
    const int fd2 = k.open_file(4096, 'b');
    const DmabufIdentity id2 = identity_of(fd2);
    park_mapping(fd2, id2, OwnedMapping(::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd2, 0), 4096), false,
                 std::make_unique<RecordingAttachment>(1, &retired));
    drop_idle_mappings();
    CHECK(retired == 2);
    k.close(fd2);
}
