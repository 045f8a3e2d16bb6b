// Side tables for the objects the layer cares about.  Handles are never
// wrapped (the ICD's cl_mem/cl_event go straight to the application, as in
// KhronosGroup/OpenCL-Layers' object-lifetime layer); instead the layer keeps
// what it knows about an object keyed by its handle.  Every lookup starts
// with an atomic emptiness check so that programs that never import pay
// one relaxed load on the calls the layer does intercept.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <sys/types.h>
#include <unordered_map>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/dmabuf/exporter.hpp"

namespace cldmabuf {

// How the ICD's object reaches an import's pages: the import's one route
// vocabulary, decided once by decide_route() (layer/import/route.hpp).  The
// values are the public CL_DMA_BUF_ROUTE_*_CLDMABUF answers of
// CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF (include/CL/cl_ext_cldmabuf.h).
enum class Route : cl_uint {
    copy = 0,               // the ICD's own storage, filled on acquire and written back on release
    host_ptr = 1,           // CL_MEM_USE_HOST_PTR over the layer's mapping (zero-copy)
    image_from_buffer = 2,  // a USE_HOST_PTR buffer and an image on it (zero-copy)
};
// For log lines.
const char *route_name(Route route);

// Who exported a dma-buf, from the exp_name line of /proc/self/fdinfo/<fd>
// (layer/dmabuf/exporter.hpp).
struct Import {
    cl_mem mem = nullptr;
    cl_context context = nullptr;
    int fd = -1;                   // the layer's own dup (F_DUPFD_CLOEXEC) of the application's fd; closed on destroy
    // The application's fd (layer/dmabuf/primitives.hpp, "Who owns the fd" in
    // docs/layer-rules.md): the spec hands it to the implementation, so it is
    // closed on destroy, but only while that number still names the same
    // dma-buf (st_dev/st_ino recorded at import) and only when app_fd_owned.
    int app_fd = -1;
    bool app_fd_owned = true;      // false: the caller keeps it (never closed by the layer)
    bool app_fd_identity = false;  // app_fd_id was recorded (fstat answered)
    DmabufIdentity app_fd_id;      // of the layer's dup, at adoption (layer/dmabuf/identity.hpp)
    // The exporter (layer/dmabuf/exporter.hpp): the blitter takes only dma-bufs
    // its own GPU exported; the zero-copy check is cached per exporter kind.
    ExporterKind exporter = ExporterKind::unknown;
    std::string exporter_name;     // exp_name as the kernel printed it
    std::string exporter_node;     // DRM render node of the exporting device, where it can be known
    dev_t exporter_rdev = 0;       // that node's st_rdev (0: unknown)
    uint64_t dmabuf_size = 0;
    size_t size = 0;               // the cl_mem's size
    void *mapping = nullptr;       // host mapping of the dma-buf
    size_t mapping_len = 0;
    bool mapped_writable = false;
    cl_mem_flags flags = 0;        // as the application passed them
    Route route = Route::host_ptr;
    std::vector<cl_mem_properties> properties;  // the caller's list, for CL_MEM_PROPERTIES
    std::vector<cl_device_id> devices;          // devices that may use it (handle list or context)
    bool device_list_given = false;

    // Image imports (layer/import/image.cpp): where the pixels sit in the
    // mapping, for the copies of Route::copy (Write/ReadImage).
    struct ImageLayout {
        size_t offset = 0;               // plane offset into the mapping (bytes)
        size_t row_pitch = 0;            // bytes
        size_t slice_pitch = 0;          // bytes (arrays; 0 otherwise)
        size_t region[3] = {0, 0, 0};    // width in pixels, rows, slices/layers
        size_t bytes = 0;                // pixel bytes a full copy moves
        cl_mem internal_buffer = nullptr;  // the layer's buffer under an image-from-buffer
        // DRM_FORMAT_MOD_LINEAR (0) unless the dma-buf is X/Y tiled: then
        // offset/row_pitch above describe the tiled surface in the dma-buf,
        // the ICD's image lives over the layer's linear shadow (layer/blit/tiled_shadow)
        // and `mapping` is null: nothing may read the dma-buf's bytes as pixels.
        uint64_t modifier = 0;
    };
    bool is_image = false;
    ImageLayout image;
    // Set once the import is in the registry: its destructor callback then
    // tears it down (layer/import/record.cpp).
    bool registered = false;

    // Feature state (the blitter's GEM handle, a tiled image's shadow, the
    // copy route's staging) lives in each feature's side table
    // (layer/core/import_state.hpp), dropped at teardown.

    // An X/Y-tiled image import: the ICD's image lives over the blitter's
    // linear shadow (layer/blit/tiled_shadow), not over the dma-buf mapping.
    // Derived from the layout, so the hot paths ask no side table.
    bool over_tiled_shadow() const { return is_image && image.modifier != 0; }

    // CPU access direction for DMA_BUF_IOCTL_SYNC, from the object's flags.
    uint64_t sync_access_flags() const;
};

namespace import_registry_detail {
// The handles of the one registry (imports()): imports and sub-buffers of
// imports (a sub-buffer can outlive the application's last reference on its
// parent).  Hidden so an inline check addresses it relative to the code:
// one load, no call, no guard.
extern std::atomic<size_t> live __attribute__((visibility("hidden")));
// Entries of every side table keyed by cl_mem that a reused handle could
// fool: the registry's and the allocator's (layer/core/allocated.cpp).
// What fresh_mem() (layer/import/fresh_handles.hpp) looks at.
extern std::atomic<size_t> mem_handles __attribute__((visibility("hidden")));
}  // namespace import_registry_detail

// No import exists: the pass-through entries (layer/entry/entry_chains.cpp) and
// the creation, retain and release entries test this inline before any
// lookup, so a program that never imports pays one load and one branch on them.
inline bool no_imports() { return import_registry_detail::live.load(std::memory_order_relaxed) == 0; }
// No side table holds a cl_mem handle: a creation entry has nothing to retire.
inline bool no_mem_handles() { return import_registry_detail::mem_handles.load(std::memory_order_relaxed) == 0; }

// Stale handles: an entry lives while its object is the
// application's, not until the ICD's destructor callback, which can come
// late (NVIDIA), after the ICD has handed the handle value to a new object.
// So an entry is retired, dead for every lookup, as soon as either
//   * the application released its last reference (retain_by_app /
//     release_by_app, the clRetainMemObject / clReleaseMemObject entries:
//     the ICD's reference count also holds its own and the layer's
//     references and cannot tell), or
//   * the ICD returned the handle for a new memory object (retire(), from
//     every creation entry, layer/import/fresh_handles.hpp).
// The retired import itself lives on in its destructor callback, which
// tears it down, once (layer/import/record.cpp); its feature state is keyed
// by the Import, not the handle (layer/core/import_state.hpp).
class ImportRegistry {
public:
    // A new import on its handle: the application holds one reference.
    void add(const std::shared_ptr<Import> &import);
    std::shared_ptr<Import> remove(cl_mem mem);
    // Removes `mem`'s entry only while it is `import` (a handle the ICD
    // reused for a newer import keeps that one).
    void remove_if(cl_mem mem, const Import *import);
    // The import behind `mem` (or behind its parent when `mem` is a
    // sub-buffer of an import: `offset` then receives the origin).
    // Map lookups only: no ICD call, so plain buffers on intercepted calls
    // (copies, maps) cost two hash lookups while imports exist.
    std::shared_ptr<Import> find(cl_mem mem, size_t *offset = nullptr) const;
    // Sub-buffers of imports, recorded by the clCreateSubBuffer override and
    // dropped by the sub-buffer's destructor callback, which passes the
    // token add_sub returned (a late callback leaves a newer sub-buffer on
    // the same handle alone), or by the application's last release.
    uint64_t add_sub(cl_mem sub, const std::shared_ptr<Import> &parent, size_t origin);
    void remove_sub(cl_mem sub, uint64_t token);
    // The ICD just created a memory object with handle `mem`: whatever the
    // registry still holds under it belonged to an object that is gone.
    void retire(cl_mem mem);
    // The application's clRetainMemObject / clReleaseMemObject on `mem`
    // (the release before the ICD's, which may free the handle for reuse).
    void retain_by_app(cl_mem mem);
    void release_by_app(cl_mem mem);
    bool empty() const { return no_imports(); }
    // Imports the application holds (sub-buffers not counted).
    size_t size() const;

private:
    struct Entry {
        std::shared_ptr<Import> import;
        size_t app_refs = 1;
    };
    struct Sub {
        std::shared_ptr<Import> parent;
        size_t origin;
        uint64_t token;
        size_t app_refs = 1;
    };
    void counted();  // under the unique lock: `live` from the maps
    mutable std::shared_mutex mutex_;
    std::unordered_map<cl_mem, Entry> map_;
    std::unordered_map<cl_mem, Sub> subs_;
    uint64_t next_token_ = 1;
};

ImportRegistry &imports();

// Events the layer created for its own commands report the command type the
// spec names (e.g. CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR; 0 keeps the
// ICD's), the error status of host work that failed, and, on profiling
// queues, the step's own timestamps.  The failure is recorded here whatever
// the ICD is told (layer/core/failed_events.hpp): some ICDs call callbacks of
// failed commands with CL_COMPLETE, some never, and in the side-table mode
// the ICD only ever sees successful events.
struct StepTimes {
    cl_ulong queued = 0, submit = 0, start = 0, end = 0;  // device clock where known, ns
};

// An entry lives while the application holds the event:
// the layer hands each step's event out with one reference; the
// application's clRetainEvent / clReleaseEvent move the count (hold / drop,
// layer/core/events.cpp), and its last release drops the entry whatever the
// ICD's CL_EVENT_REFERENCE_COUNT says (ICDs keep references of their own).
// The layer's own retains and releases go to next() and do not count, but
// for one: a CL_COMPLETE callback the layer relays holds the entry until it
// ran.  A handle the ICD returns for a new event (add, clCreateUserEvent)
// starts clean.
class EventTypeRegistry {
public:
    // A layer command's event, handed to the application with one reference.
    void add(cl_event event, cl_command_type type);
    // One more (hold) or one fewer (drop) reference on the entry, if any.
    void hold(cl_event event);
    void drop(cl_event event);
    bool contains(cl_event event) const;
    bool find(cl_event event, cl_command_type *type) const;
    void set_failed(cl_event event, cl_int status);
    // The error a layer command ended with, if any.
    bool failed(cl_event event, cl_int *status) const;
    void set_times(cl_event event, const StepTimes &times);
    bool times(cl_event event, StepTimes *times) const;
    void remove(cl_event event);
    bool empty() const { return count_.load(std::memory_order_relaxed) == 0; }
    size_t size() const { return count_.load(std::memory_order_relaxed); }

private:
    struct Entry {
        size_t holds = 1;
        cl_command_type type = 0;
        cl_int status = CL_SUCCESS;
        bool timed = false;
        StepTimes times;
    };
    mutable std::mutex mutex_;
    std::unordered_map<cl_event, Entry> map_;
    std::atomic<size_t> count_{0};
};

EventTypeRegistry &event_types();

}  // namespace cldmabuf
