#include "layer/dmabuf/exporter.hpp"

#include <drm.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>
#include <mutex>
#include <vector>

#include "layer/base/kernel_ops.hpp"
#include "layer/base/owned_fd.hpp"

namespace cldmabuf {

std::string parse_exp_name(const std::string &fdinfo) {
    static constexpr char key[] = "exp_name:";
    size_t at = 0;
    while (at < fdinfo.size()) {
        const size_t end = std::min(fdinfo.find('\n', at), fdinfo.size());
        if (fdinfo.compare(at, sizeof key - 1, key) == 0) {
            size_t v = at + sizeof key - 1;
            while (v < end && (fdinfo[v] == ' ' || fdinfo[v] == '\t')) ++v;
            size_t e = end;
            while (e > v && (fdinfo[e - 1] == ' ' || fdinfo[e - 1] == '\t' || fdinfo[e - 1] == '\r')) --e;
            return fdinfo.substr(v, e - v);
        }
        at = end + 1;
    }
    return {};
}

ExporterKind exporter_kind_of(const std::string &n) {
    if (n.empty()) return ExporterKind::unknown;
    if (n == "i915") return ExporterKind::i915;
    // dma-heap exporters name themselves after the heap (system_heap.c).
    if (n == "system" || n == "system-uncached") return ExporterKind::system_heap;
    if (n == "linux,cma" || n == "reserved" || n == "cma") return ExporterKind::cma_heap;
    if (n == "udmabuf") return ExporterKind::udmabuf;
    // drm_gem_prime_export() exports as KBUILD_MODNAME of drm_prime.c.
    if (n == "drm") return ExporterKind::drm_generic;
    return ExporterKind::other;
}

const char *exporter_kind_name(ExporterKind kind) {
    switch (kind) {
    case ExporterKind::unknown: return "unknown exporter";
    case ExporterKind::i915: return "i915";
    case ExporterKind::system_heap: return "system heap";
    case ExporterKind::cma_heap: return "CMA heap";
    case ExporterKind::udmabuf: return "udmabuf";
    case ExporterKind::drm_generic: return "DRM (generic PRIME export)";
    case ExporterKind::other: return "other exporter";
    }
    return "unknown exporter";
}

namespace {

bool node_is_i915(int fd) {
    char name[16] = {};
    drm_version v{};
    v.name = name;
    v.name_len = sizeof name - 1;
    if (kernel_ioctl_retry(fd, DRM_IOCTL_VERSION, &v) != 0) return false;
    return v.name_len == 4 && std::memcmp(name, "i915", 4) == 0;
}

struct I915Nodes {
    std::mutex mu;
    bool scanned = false;
    std::vector<std::pair<std::string, dev_t>> nodes;
};

I915Nodes &i915_nodes() {
    static I915Nodes *n = new I915Nodes;  // never destroyed: imports may outlive static teardown
    return *n;
}

// Every i915 render node of the machine, once per process.
std::vector<std::pair<std::string, dev_t>> scan_i915_nodes() {
    I915Nodes &n = i915_nodes();
    std::lock_guard lock(n.mu);
    if (n.scanned) return n.nodes;
    n.scanned = true;
    std::vector<std::string> names = kernel().list_dir("/dev/dri");
    std::sort(names.begin(), names.end());
    for (const std::string &name : names) {
        if (name.rfind("renderD", 0) != 0) continue;
        const std::string path = "/dev/dri/" + name;
        const OwnedFd fd(kernel().open(path.c_str(), O_RDWR | O_CLOEXEC));
        if (!fd) continue;
        struct stat st {};
        if (node_is_i915(fd.get()) && kernel().stat(path.c_str(), &st) == 0) n.nodes.emplace_back(path, st.st_rdev);
    }
    return n.nodes;
}

}  // namespace

namespace {

// Exporters by dma-buf inode.  Reading fdinfo costs a procfs open/read/close
// per import (24 us in this sandbox, a few us on a plain kernel), and video
// pipelines re-import the same pool of buffers; a dma-buf's exporter never
// changes and its inode number is not reused while it lives.  An entry
// outlives its buffer, and a recycled number (layer/dmabuf/identity.hpp)
// has another birth time: keyed by both.  Not cached: size 0, the one
// anonymous inode every dma-buf shared before Linux 5.3.  Bounded: cleared
// when full.
struct IdKey {
    dev_t dev;
    ino_t ino;
    long long born_ns;
    bool operator<(const IdKey &o) const {
        return std::tie(dev, ino, born_ns) < std::tie(o.dev, o.ino, o.born_ns);
    }
};
struct IdCache {
    std::mutex mu;
    std::map<IdKey, ExporterId> ids;
};

IdCache &id_cache() {
    static IdCache *c = new IdCache;  // never destroyed: imports may outlive static teardown
    return *c;
}

constexpr size_t kIdCacheEntries = 256;

}  // namespace

void forget_exporters() {
    {
        I915Nodes &n = i915_nodes();
        std::lock_guard lock(n.mu);
        n.scanned = false;
        n.nodes.clear();
    }
    std::lock_guard lock(id_cache().mu);
    id_cache().ids.clear();
}

ExporterId identify_exporter(int fd, const DmabufIdentity *known) {
    DmabufIdentity st = known ? *known : DmabufIdentity{};
    const bool keyed = (known || dmabuf_identity(fd, &st)) && st.size > 0;
    const IdKey key{st.dev, st.ino, st.born_ns};
    if (keyed) {
        std::lock_guard lock(id_cache().mu);
        if (auto it = id_cache().ids.find(key); it != id_cache().ids.end()) return it->second;
    }
    ExporterId id;
    std::string text;
    const std::string path = "/proc/self/fdinfo/" + std::to_string(fd);
    if (kernel().read_file(path.c_str(), &text) != 0) return id;  // not cached: may be readable later
    id.name = parse_exp_name(text);
    id.kind = exporter_kind_of(id.name);
    if (id.kind == ExporterKind::i915) {
        const auto nodes = scan_i915_nodes();
        if (nodes.size() == 1) {
            id.node = nodes[0].first;
            id.rdev = nodes[0].second;
        }
    }
    if (keyed && id.kind != ExporterKind::unknown) {
        std::lock_guard lock(id_cache().mu);
        if (id_cache().ids.size() >= kIdCacheEntries) id_cache().ids.clear();
        id_cache().ids.emplace(key, id);
    }
    return id;
}

}  // namespace cldmabuf
