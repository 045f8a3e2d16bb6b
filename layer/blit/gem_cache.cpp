#include "layer/blit/gem_cache.hpp"

#include <cerrno>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "layer/blit/exporter_gate.hpp"
#include "layer/log.hpp"

namespace cldmabuf {

BltBackend::~BltBackend() {
    if (engine && error == 0) engine->release(imp);
}

int blt_import_of(Import &import, i915::BltEngine &engine, i915::BltImport *out) {
    std::lock_guard lock(import.backend_mutex);
    auto *state = dynamic_cast<BltBackend *>(import.backend.get());
    if (!state) {
        if (import.backend) return -EBUSY;  // another backend owns the slot
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
        state = fresh.get();
        import.backend = std::move(fresh);
    }
    if (state->error != 0) return state->error;
    *out = state->imp;
    return 0;
}

}  // namespace cldmabuf
