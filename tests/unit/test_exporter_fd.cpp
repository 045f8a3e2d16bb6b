// The exporter of a dma-buf (layer/dmabuf/exporter.hpp), who owns the fd at
// destroy (layer/dmabuf/primitives.hpp, close_import_fds) and the blitter's exporter
// gate (layer/blit/gem_cache.hpp, exporter_mismatch), against a fake kernel.
#include <catch2/catch_test_macros.hpp>

#include <drm.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "fake_kernel.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/dmabuf/exporter.hpp"
#include "layer/core/import_fds.hpp"
#include "layer/blit/gem_cache.hpp"

using namespace cldmabuf;

namespace {

// fdinfo files, DRM nodes with their driver names, fstat identities, closes.
struct ExporterKernel : unit::FakeKernel {
    std::map<std::string, std::string> files;              // path -> contents
    std::map<std::string, std::string> drivers;            // /dev/dri/renderD* -> DRM driver name
    std::map<int, std::string> open_nodes;                 // fd -> node path
    std::map<int, std::pair<dev_t, ino_t>> identities;     // fd -> (st_dev, st_ino); missing = EBADF
    std::map<int, std::pair<off_t, time_t>> sizes_births;  // fd -> (st_size, st_ctim.tv_sec); missing = 0, 0
    std::set<int> closed;
    int next_fd = 50;

    int read_file(const char *path, std::string *out) override {
        auto it = files.find(path);
        if (it == files.end()) { errno = ENOENT; return -1; }
        *out = it->second;
        return 0;
    }
    std::vector<std::string> list_dir(const char *) override {
        std::vector<std::string> names{"card0", "by-path"};
        for (const auto &[path, driver] : drivers) names.push_back(path.substr(9));
        return names;
    }
    int open(const char *path, int) override {
        if (!drivers.count(path)) { errno = ENOENT; return -1; }
        open_nodes[next_fd] = path;
        return next_fd++;
    }
    int close(int fd) override {
        closed.insert(fd);
        open_nodes.erase(fd);
        return 0;
    }
    int ioctl(int fd, unsigned long request, void *arg) override {
        if (request != DRM_IOCTL_VERSION || !open_nodes.count(fd)) { errno = ENOTTY; return -1; }
        auto *v = static_cast<drm_version *>(arg);
        const std::string &name = drivers[open_nodes[fd]];
        std::memcpy(v->name, name.data(), std::min(name.size(), v->name_len));
        v->name_len = name.size();
        return 0;
    }
    int stat(const char *path, struct stat *st) override {
        if (!drivers.count(path)) { errno = ENOENT; return -1; }
        *st = {};
        st->st_rdev = makedev(226, std::stoi(std::string(path).substr(16)));
        return 0;
    }
    // A dup names the same file as its source, as the kernel's does.
    int dup(int fd) override {
        const int d = unit::FakeKernel::dup(fd);
        if (auto it = identities.find(fd); it != identities.end()) identities[d] = it->second;
        return d;
    }
    int fstat(int fd, struct stat *st) override {
        auto it = identities.find(fd);
        if (it == identities.end()) { errno = EBADF; return -1; }
        *st = {};
        st->st_dev = it->second.first;
        st->st_ino = it->second.second;
        if (auto sb = sizes_births.find(fd); sb != sizes_births.end()) {
            st->st_size = sb->second.first;
            st->st_ctim.tv_sec = sb->second.second;
        }
        return 0;
    }
};

const char *kFdinfoI915 = "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t2052\nsize:\t65536\ncount:\t2\n"
                          "exp_name:\ti915\nname:\t\n";

}  // namespace

TEST_CASE("exporter: exp_name is read from fdinfo and named by kind") {
    CHECK(parse_exp_name(kFdinfoI915) == "i915");
    CHECK(parse_exp_name("size:\t4096\nexp_name:  system \n") == "system");
    CHECK(parse_exp_name("pos:\t0\nflags:\t02\n") == "");  // a memfd: no exp_name
    CHECK(parse_exp_name("my_exp_name:\tx\n") == "");
    CHECK(exporter_kind_of("i915") == ExporterKind::i915);
    CHECK(exporter_kind_of("system") == ExporterKind::system_heap);
    CHECK(exporter_kind_of("udmabuf") == ExporterKind::udmabuf);
    CHECK(exporter_kind_of("drm") == ExporterKind::drm_generic);
    CHECK(exporter_kind_of("amdgpu") == ExporterKind::other);
    CHECK(exporter_kind_of("") == ExporterKind::unknown);
}

TEST_CASE("exporter: an i915 dma-buf's device is named only when exactly one i915 node exists") {
    ExporterKernel k;
    unit::ScopedKernel scoped(&k);
    forget_exporters();
    k.files["/proc/self/fdinfo/7"] = kFdinfoI915;
    k.drivers["/dev/dri/renderD128"] = "i915";
    k.drivers["/dev/dri/renderD129"] = "amdgpu";

    ExporterId id = identify_exporter(7);
    CHECK(id.kind == ExporterKind::i915);
    CHECK(id.node == "/dev/dri/renderD128");
    CHECK(id.rdev == makedev(226, 128));
    CHECK(k.open_nodes.empty());  // every node opened for the scan is closed again

    SECTION("two i915 devices: which one exported it is not known") {
        forget_exporters();
        k.drivers["/dev/dri/renderD130"] = "i915";
        id = identify_exporter(7);
        CHECK(id.kind == ExporterKind::i915);
        CHECK(id.node.empty());
        CHECK(id.rdev == 0);
    }
    SECTION("no fdinfo (old kernel, fake seam): unknown") {
        id = identify_exporter(8);
        CHECK(id.kind == ExporterKind::unknown);
        CHECK(id.name.empty());
    }
    SECTION("a heap's dma-buf names no device") {
        k.files["/proc/self/fdinfo/9"] = "size:\t4096\ncount:\t1\nexp_name:\tsystem\n";
        id = identify_exporter(9);
        CHECK(id.kind == ExporterKind::system_heap);
        CHECK(id.rdev == 0);
    }
    forget_exporters();
}

TEST_CASE("exporter: cached per dma-buf; a recycled inode number (another birth) is read again, the one shared "
          "inode of kernels before 5.3 never cached") {
    ExporterKernel k;
    unit::ScopedKernel scoped(&k);
    forget_exporters();
    k.identities[8] = {makedev(0, 13), 4242};
    k.sizes_births[8] = {65536, 1000};
    k.files["/proc/self/fdinfo/8"] = kFdinfoI915;
    CHECK(identify_exporter(8).kind == ExporterKind::i915);
    k.files["/proc/self/fdinfo/8"] = "size:\t65536\nexp_name:\tsystem\n";
    CHECK(identify_exporter(8).kind == ExporterKind::i915);  // the same buffer: not read again
    // The buffer died and its number (and size) went to a heap buffer made later.
    k.sizes_births[8] = {65536, 2000};
    CHECK(identify_exporter(8).kind == ExporterKind::system_heap);
    // Size 0: every dma-buf on one anonymous inode; each is read.
    k.identities[9] = {makedev(0, 13), 1};
    k.files["/proc/self/fdinfo/9"] = "exp_name:\tudmabuf\n";
    CHECK(identify_exporter(9).kind == ExporterKind::udmabuf);
    k.files["/proc/self/fdinfo/9"] = "exp_name:\tsystem\n";
    CHECK(identify_exporter(9).kind == ExporterKind::system_heap);
}

TEST_CASE("fd ownership: the layer works on a dup and closes the application's number only while it is the dma-buf") {
    ExporterKernel k;
    unit::ScopedKernel scoped(&k);
    k.identities[5] = {makedev(0, 13), 2052};  // the application's fd: a dma-buf
    Import import;
    REQUIRE(adopt_dmabuf_fd(import, 5) == 0);
    CHECK(import.fd == 105);  // FakeKernel::dup
    CHECK(import.app_fd == 5);
    CHECK(import.app_fd_identity);

    SECTION("still the same dma-buf: both closed (the spec's ownership)") {
        CHECK(close_import_fds(import));
        CHECK(k.closed == std::set<int>{5, 105});
    }
    SECTION("closed by the application and the number reused by another file: left alone") {
        k.identities[5] = {makedev(0, 30), 77};
        CHECK_FALSE(close_import_fds(import));
        CHECK(k.closed == std::set<int>{105});
    }
    SECTION("closed by the application and not reused: nothing to close but the dup") {
        k.identities.erase(5);
        CHECK_FALSE(close_import_fds(import));
        CHECK(k.closed == std::set<int>{105});
    }
    SECTION("not the application's to give (clImportMemoryARM): never closed") {
        import.app_fd_owned = false;
        CHECK_FALSE(close_import_fds(import));
        CHECK(k.closed == std::set<int>{105});
    }
}

TEST_CASE("fd ownership: without an identity at import the application's number is never closed") {
    ExporterKernel k;
    unit::ScopedKernel scoped(&k);
    Import import;
    REQUIRE(adopt_dmabuf_fd(import, 6) == 0);  // fstat fails: no identity
    CHECK_FALSE(import.app_fd_identity);
    k.identities[6] = {makedev(0, 13), 1};
    CHECK_FALSE(close_import_fds(import));
    CHECK(k.closed == std::set<int>{106});
}

TEST_CASE("blitter gate: only the blitter's own GPU's i915 exports are taken") {
    i915::Gen9Info node;
    node.path = "/dev/dri/renderD128";
    node.has_pci = true;
    node.pci = PciAddress{0, 0, 2, 0};
    const dev_t rdev = makedev(226, 128);
    Import import;
    import.app_fd = 9;
    import.exporter = ExporterKind::i915;
    import.exporter_node = "/dev/dri/renderD128";
    import.exporter_rdev = rdev;
    CHECK(exporter_mismatch(import, node, rdev).empty());

    SECTION("a heap's buffer: refused, naming both sides") {
        import.exporter = ExporterKind::system_heap;
        const std::string why = exporter_mismatch(import, node, rdev);
        CHECK(why.find("system heap") != std::string::npos);
        CHECK(why.find("/dev/dri/renderD128") != std::string::npos);
        CHECK(why.find("0000:00:02.0") != std::string::npos);
    }
    SECTION("another i915 device's buffer: refused") {
        import.exporter_node = "/dev/dri/renderD129";
        import.exporter_rdev = makedev(226, 129);
        const std::string why = exporter_mismatch(import, node, rdev);
        CHECK(why.find("renderD129") != std::string::npos);
        CHECK(why.find("renderD128") != std::string::npos);
    }
    SECTION("an i915 buffer whose device is unknown: refused") {
        import.exporter_rdev = 0;
        CHECK_FALSE(exporter_mismatch(import, node, rdev).empty());
    }
    SECTION("an unknown exporter: refused") {
        import.exporter = ExporterKind::unknown;
        CHECK_FALSE(exporter_mismatch(import, node, rdev).empty());
    }
}
