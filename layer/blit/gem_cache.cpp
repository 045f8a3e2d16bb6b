#include "layer/blit/gem_cache.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <sys/stat.h>

#include "layer/dmabuf/exporter.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/core/import_state.hpp"
#include "layer/base/log.hpp"
#include "layer/core/pci_address.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf {

// ---- the exporter gate


dev_t node_rdev(const i915::Gen9Info &node) {
    struct stat st {};
    return kernel().stat(node.path.c_str(), &st) == 0 ? st.st_rdev : 0;
}

std::string exporter_mismatch(const Import &import, const i915::Gen9Info &node, dev_t rdev) {
    const std::string blitter = "the blitter's GPU is " + node.path + (node.has_pci ? " at " + pci_text(node.pci) : "");
    const std::string buffer = "dma-buf fd " + std::to_string(import.app_fd) + " is exported by ";
    if (import.exporter != ExporterKind::i915) {
        std::string what = exporter_kind_name(import.exporter);
        if (import.exporter == ExporterKind::other) what += " \"" + import.exporter_name + "\"";
        return buffer + what + ", " + blitter;
    }
    if (import.exporter_rdev == 0 || rdev == 0)
        return buffer + "an i915 device that cannot be named (not exactly one i915 node), " + blitter;
    if (import.exporter_rdev != rdev) return buffer + "i915 at " + import.exporter_node + ", " + blitter;
    return {};
}

bool blt_any_exporter() {
    static const bool any = [] {
        const char *v = setting("CLDMABUF_BLT_EXPORTERS");
        if (!v || !*v || !std::strcmp(v, "own")) return false;
        if (!std::strcmp(v, "any")) return true;
        LOG_WARN("CLDMABUF_BLT_EXPORTERS=%s is not own or any: own", v);
        return false;
    }();
    return any;
}

// ---- the GEM handles

BltBackend::~BltBackend() {
    if (engine && error == 0) engine->release(imp);
}

namespace {

void forget_backend(const Import &import);
ImportState<std::unique_ptr<BltBackend>> backends(forget_backend);
void forget_backend(const Import &import) { backends.forget(import); }

// One GEM import at a time: the first copy of an import makes its entry.
std::mutex making;

}  // namespace

int blt_import_of(Import &import, i915::BltEngine &engine, i915::BltImport *out) {
    std::lock_guard lock(making);
    std::unique_ptr<BltBackend> *held = backends.find(import);
    BltBackend *state = held ? held->get() : nullptr;
    if (!state) {
        auto fresh = std::make_unique<BltBackend>();
        fresh->engine = &engine;
        const i915::Gen9Info &node = engine.device_info();
        std::string why = blt_any_exporter() ? std::string() : exporter_mismatch(import, node, node_rdev(node));
        if (!why.empty()) {
            // i915 would import another device's (or a heap's) dma-buf too,
            // but that memory is not this GPU's to copy: the ICD does it.
            fresh->error = -EXDEV;
            // An import still being made (a tiled image) reports the refusal itself.
            if (import.mem)
                LOG_WARN("blitter: copies of %p go to the ICD: %s", static_cast<void *>(import.mem), why.c_str());
        } else {
            fresh->error = engine.import(import.fd, 0, &fresh->imp);
            if (fresh->error != 0)
                LOG_WARN("blitter: PRIME import of dma-buf fd %d failed (%d); copies of %p go to the ICD",
                         import.fd, fresh->error, static_cast<void *>(import.mem));
        }
        state = backends.emplace(import, std::move(fresh)).get();
    }
    if (state->error != 0) return state->error;
    *out = state->imp;
    return 0;
}

}  // namespace cldmabuf
