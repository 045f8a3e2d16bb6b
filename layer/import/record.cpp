#include "layer/import/record.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "layer/core/dispatch.hpp"
#include "layer/core/dmabuf_aliases.hpp"
#include "layer/dmabuf/exporter.hpp"
#include "layer/core/import_fds.hpp"
#include "layer/dmabuf/mapping_cache.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/core/import_state.hpp"
#include "layer/base/log.hpp"
#include "layer/base/owned_fd.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf {

int map_dmabuf(Import &import, int fd, size_t bytes, cl_mem_flags flags) {
    const long page = sysconf(_SC_PAGESIZE);
    const size_t len = (bytes + page - 1) / page * page;
    // A CL_MEM_READ_ONLY object is only read by devices: the layer's mapping
    // (which the ICD uses in place) is read-only too, so nothing through it
    // can write the producer's buffer.  The copy route never writes such
    // an object back (acquire_release.cpp skips CL_MEM_READ_ONLY on release).
    const bool writable = !(flags & CL_MEM_READ_ONLY);
    // The identity recorded at adoption is of import.fd (the dup): anything
    // else is asked again.
    const DmabufIdentity *known = fd == import.fd ? import_identity(import) : nullptr;
    void *map = acquire_mapping(fd, len, writable, &import.mapping_len, known);
    if (map == MAP_FAILED) return errno;
    import.mapped_writable = writable;
    import.mapping = map;
    return 0;
}

void unmap_dmabuf(Import &import, bool keep) {
    if (!import.mapping) return;
    release_mapping(import.mapping, import.mapping_len, keep);
    import.mapping = nullptr;
}

void set_route(Import &import, Route route) {
    import.route = route;
}

PendingImport::~PendingImport() {
    if (committed_) return;
    forget_import_state(*import_);
    unmap_dmabuf(*import_, false);
    if (adopted_) drop_dmabuf_dup(*import_);
}

cl_int adopt_import_fd(PendingImport &pending, const DmabufRequest &props, std::string *why) {
    if (int err = adopt_dmabuf_fd(*pending, props.fd); err != 0) {
        *why = "cannot duplicate dma-buf fd " + std::to_string(props.fd) + ": " + std::strerror(-err);
        return CL_OUT_OF_RESOURCES;
    }
    pending.adopted_ = true;
    set_exporter(*pending, identify_exporter(pending->fd, import_identity(*pending)));
    return CL_SUCCESS;
}

void fill_import(Import &import, cl_context context, DmabufRequest &props, uint64_t dmabuf_bytes, size_t size,
                 cl_mem_flags flags, const std::vector<cl_device_id> &devices) {
    import.context = context;
    import.dmabuf_size = dmabuf_bytes;
    import.size = size;
    import.flags = flags;
    import.properties = std::move(props.original);
    import.device_list_given = props.has_device_list;
    import.devices = devices;
}

namespace {

// The ICD no longer touches the mapping (its own destructor callbacks ran
// before ours, which were registered earlier): give back what the import
// holds: GEM handle, tiled shadow, mapping, the fds.
void teardown(Import &import) {
    forget_import_state(import);  // GEM handle, tiled shadow, staging: the ICD's objects over them are gone
    const size_t mapped = import.mapping_len;
    unmap_dmabuf(import);  // layer/dmabuf/mapping_cache may keep it for the next import
    const int dup = import.fd, app = import.app_fd;
    const bool closed_app = close_import_fds(import);
    LOG_DEBUG("import %p destroyed: released the mapping (%zu bytes), closed the layer's fd %d%s%d",
              static_cast<void *>(import.mem), mapped, dup,
              closed_app ? " and the application's fd " : "; left the application's number alone: ", app);
}

// The object is gone.  Without an internal buffer nothing uses the mapping
// any more; with one, the buffer (released by the image last) tears down.
// The callback carries its own import: NVIDIA calls destructor callbacks a
// while after the object went and may have handed its handle value to a new
// import meanwhile (the e2e thread test and an image copy test died with
// SIGSEGV / got CL_INVALID_VALUE there when a late callback, looking the
// handle up, tore down the newer import under its user).  The registry
// entry goes only if it is still this import's.  An import whose commit
// failed (never registered) is torn down by its PendingImport instead.
//
// Each callback's user data is a shared_ptr handed over at registration
// (commit_import): adopted back first thing.
void CL_CALLBACK on_import_destroyed(cl_mem mem, void *user_data) {
    const std::shared_ptr<Import> import =
        std::move(*std::unique_ptr<std::shared_ptr<Import>>(static_cast<std::shared_ptr<Import> *>(user_data)));
    imports().remove_if(mem, import.get());
    if (import->registered && !import->image.internal_buffer) teardown(*import);
}

void CL_CALLBACK on_internal_buffer_destroyed(cl_mem, void *user_data) {
    const std::unique_ptr<std::shared_ptr<Import>> holder(static_cast<std::shared_ptr<Import> *>(user_data));
    teardown(**holder);
}

}  // namespace

cl_int commit_import(PendingImport &pending, IcdMem &mem, IcdMem internal_buffer) {
    auto undo = [&] {
        // on_import_destroyed runs on this release but finds nothing registered.
        mem.reset();
        internal_buffer.reset();
        return CL_OUT_OF_RESOURCES;
    };
    pending->mem = mem.get();
    auto own = std::make_unique<std::shared_ptr<Import>>(pending.shared());
    if (next().clSetMemObjectDestructorCallback(mem.get(), on_import_destroyed, own.get()) != CL_SUCCESS)
        return undo();
    own.release();  // the callback's now
    if (internal_buffer) {
        // The buffer outlives the image (which holds it); it closes the import.
        auto holder = std::make_unique<std::shared_ptr<Import>>(pending.shared());
        if (next().clSetMemObjectDestructorCallback(internal_buffer.get(), on_internal_buffer_destroyed,
                                                    holder.get()) != CL_SUCCESS)
            return undo();
        holder.release();  // the callback's now
        pending->image.internal_buffer = internal_buffer.get();
        internal_buffer.reset();  // the image keeps it alive
    }
    pending->registered = true;
    imports().add(pending.shared());
    note_dmabuf_import(*pending);  // the copy route's aliases of one dma-buf (layer/handoff/alias_merge.hpp)
    pending.committed();  // the destructor callbacks close it now
    return CL_SUCCESS;
}

void count_import(const Import &import, size_t bytes) {
    stats().imports++;
    if (import.over_tiled_shadow()) {
        stats().tiled_imports++;
    } else if (import.route != Route::copy) {
        stats().zero_copy_imports++;
        stats().zero_copy_bytes += bytes;
    } else {
        stats().copy_imports++;
        stats().host_bytes_copied += bytes;
    }
}

std::shared_ptr<Import> close_handed_fd(cl_mem mem, int fd) {
    std::shared_ptr<Import> import = imports().find(mem);
    if (import && import->app_fd == fd && import->app_fd_owned) {
        import->app_fd_owned = false;
        OwnedFd(fd).reset();
    }
    return import;
}

}  // namespace cldmabuf
