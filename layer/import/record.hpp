// The registry record of an import (layer/core/registry.hpp Import), written once
// for buffers and images: the fields every import has, the mapping, the
// route, the commit into the registry with its destructor callbacks, the
// stats, and the teardown when the ICD destroys the object.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/import/request.hpp"
#include "layer/core/registry.hpp"
#include "layer/core/icd_ref.hpp"

namespace cldmabuf {

// Maps the first `bytes` of the import's dma-buf (page-rounded) into
// import->mapping: writable when the fd allows it, read-only for an object
// the device only reads.  0 or errno.
int map_dmabuf(Import &import, int fd, size_t bytes, cl_mem_flags flags);
// Gives the mapping back (layer/dmabuf/mapping_cache): kept for a later import
// of the same dma-buf when `keep` and CLDMABUF_MAP_CACHE_MB allows, else
// unmapped.  Failed imports pass keep = false.
void unmap_dmabuf(Import &import, bool keep = true);

// Records the route decide_route() chose (the one vocabulary; Import::route).
void set_route(Import &import, Route route);

// An import on its way: until commit_import() succeeds, dropping it undoes
// what was taken (the mapping, the layer's dup of the fd; never the
// application's fd).
class PendingImport {
public:
    PendingImport() : import_(std::make_shared<Import>()) {}
    PendingImport(const PendingImport &) = delete;
    PendingImport &operator=(const PendingImport &) = delete;
    ~PendingImport();
    Import &operator*() const { return *import_; }
    Import *operator->() const { return import_.get(); }
    const std::shared_ptr<Import> &shared() const { return import_; }
    void committed() { committed_ = true; }

private:
    std::shared_ptr<Import> import_;
    bool committed_ = false;
    bool adopted_ = false;
    friend cl_int adopt_import_fd(PendingImport &, const DmabufRequest &, std::string *);
};

// The layer's own duplicate of the application's fd from here on
// (docs/layer-rules.md, "Who owns the fd"), and the exporter behind it.
// CL_OUT_OF_RESOURCES with a reason when the fd cannot be duplicated.
cl_int adopt_import_fd(PendingImport &pending, const DmabufRequest &props, std::string *why);

// For an fd the layer handed to its own import (an export nobody else holds:
// clImportMemoryARM's dup, an EGL or VA plane's export): the import works on
// its duplicate (Import::fd), so `fd` is closed now instead of being left to
// the import.  The import closes an owned fd at destroy only when it could
// record its identity at import (docs/layer-rules.md, "Who owns the fd"); for
// such an fd that rule would leak it.  An import the layer did not record
// (the ICD's own) keeps `fd`, closed with it.  Returns the layer's record of
// `mem`, or nullptr.
std::shared_ptr<Import> close_handed_fd(cl_mem mem, int fd);

// What every import records, from its request.
void fill_import(Import &import, cl_context context, DmabufRequest &props, uint64_t dmabuf_bytes, size_t size,
                 cl_mem_flags flags, const std::vector<cl_device_id> &devices);

// Registers the destructor callbacks (on `mem`, and on the layer's
// `internal_buffer` under an image, which the image keeps alive and which
// then closes the import) and adds the record.  On failure releases `mem`
// and `internal_buffer` and returns CL_OUT_OF_RESOURCES; the pending import
// then undoes the rest.
cl_int commit_import(PendingImport &pending, IcdMem &mem, IcdMem internal_buffer);

// The stats of a successful import; `bytes` are the bytes a device copy moves.
void count_import(const Import &import, size_t bytes);

}  // namespace cldmabuf
