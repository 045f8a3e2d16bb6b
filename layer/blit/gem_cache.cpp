#include "layer/blit/gem_cache.hpp"

#include <cerrno>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "layer/blit/exporter_gate.hpp"
#include "layer/core/import_state.hpp"
#include "layer/base/log.hpp"

namespace cldmabuf {

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
