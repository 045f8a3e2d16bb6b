#include "layer/va/libva.hpp"

#include <dlfcn.h>

#include <mutex>

#include "layer/base/log.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf::va {
namespace {

template <typename Fn>
bool load_symbol(void *lib, const char *name, Fn *out) {
    *out = reinterpret_cast<Fn>(dlsym(lib, name));
    return *out != nullptr;
}

Libva loaded;
bool available = false;

void load_libva() {
    const char *name = setting("CLDMABUF_VA_LIBRARY");
    if (!name || !*name) name = "libva.so.2";
    // RTLD_NOLOAD first: an application that uses VA-API already has it, and
    // the same copy must answer for its VADisplay.
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!lib) lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        LOG_INFO("va: %s not loadable (%s): cl_intel_va_api_media_sharing is not offered", name, dlerror());
        return;
    }
    const bool ok = load_symbol(lib, "vaDisplayIsValid", &loaded.display_is_valid) &&
                    load_symbol(lib, "vaExportSurfaceHandle", &loaded.export_surface_handle) &&
                    load_symbol(lib, "vaSyncSurface", &loaded.sync_surface) &&
                    load_symbol(lib, "vaCreateSurfaces", &loaded.create_surfaces) &&
                    load_symbol(lib, "vaDestroySurfaces", &loaded.destroy_surfaces) &&
                    load_symbol(lib, "vaErrorStr", &loaded.error_str);
    if (!ok) {
        // libva < 2.1 has no vaExportSurfaceHandle.
        LOG_WARN("va: %s lacks a function the layer needs (libva >= 2.1): cl_intel_va_api_media_sharing is not "
                 "offered", name);
        dlclose(lib);
        return;
    }
    load_symbol(lib, "vaSyncSurface2", &loaded.sync_surface2);
    available = true;  // kept loaded for the process: the application's displays live in it
}

}  // namespace

const Libva *libva() {
    static std::once_flag once;
    std::call_once(once, load_libva);
    return available ? &loaded : nullptr;
}

std::string status_text(const Libva &api, VAStatus status) {
    const char *text = api.error_str(status);
    return std::string(text ? text : "unknown VA status") + " (" + std::to_string(status) + ")";
}

}  // namespace cldmabuf::va
