#include "tools/info/report.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "layer/base/cl_compat.h"
#include "layer/blit/device_pairing.hpp"
#include "include/CL/cl_ext_cldmabuf.h"
#include "layer/base/settings.hpp"
#include "tools/info/cl_view.hpp"
#include "tools/info/exporters.hpp"
#include "tools/info/va_pairing.hpp"
#include "tools/info/fd_facts.hpp"
#include "tools/info/icd_profile.hpp"
#include "tools/info/quiet_stderr.hpp"

namespace cldmabuf::info {
namespace {

// CLDMABUF_DMABUF_IMPORT=layer: the layer imports even where the ICD can
// (the same reading as layer/import/native.cpp's dmabuf_importer()).
bool dmabuf_import_forced_to_layer() {
    const char *v = setting("CLDMABUF_DMABUF_IMPORT");
    return v && !std::strcmp(v, "layer");
}


const char *const kDmaBufExt = "cl_khr_external_memory_dma_buf";

std::string type_name(cl_device_type t) {
    if (t & CL_DEVICE_TYPE_CPU) return "CPU";
    if (t & CL_DEVICE_TYPE_GPU) return "GPU";
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
    if (t & CL_DEVICE_TYPE_CUSTOM) return "custom";
    return "unknown";
}

Json hex_types(const std::vector<uint64_t> &types) {
    Json a = Json::array();
    for (uint64_t t : types) {
        char buf[24];
        std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(t));
        a.push(buf);
    }
    return a;
}

// Entries of `with` that `without` lacks: what the layer added.
Json added(const std::string &with, const std::string &without) {
    Json a = Json::array();
    for (const std::string &e : split_extensions(with))
        if (!has_extension(without, e)) a.push(e);
    return a;
}

// Whether the layer's library is mapped into this process (the loader only
// maps it when OPENCL_LAYERS named it and its init succeeded).
bool layer_mapped(const std::string &layer_path) {
    std::string needle = "libcldmabuf";
    if (!layer_path.empty()) {
        char resolved[4096];
        if (realpath(layer_path.c_str(), resolved)) needle = resolved;
    }
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
        if (line.find(needle) != std::string::npos) return true;
    return false;
}

// A setting as the layer reads it: environment, then the settings file
// (layer/base/settings.hpp); the tool links the same table.
const char *env_or(const char *name, const char *fallback) {
    const char *v = setting(name);
    return v && *v ? v : fallback;
}

// The rule of layer/import/route.cpp (route_policy, device_shares_host_memory,
// decide_route), restated for one device: the tool cannot reach the layer's
// internals through the loader.  With --fd the route is measured instead (an
// import, then CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF).
void predict_route(const ClDevice &d, Json *dev) {
    const std::string choice = env_or("CLDMABUF_IMPORT", "auto");
    if (choice == "copy") {
        dev->set("route", "device copy");
        dev->set("route_reason", "CLDMABUF_IMPORT=copy: the ICD keeps its own copy, synced on acquire/release");
    } else if (choice == "zero-copy" || choice == "zerocopy") {
        dev->set("route", "zero-copy");
        dev->set("route_reason", "CLDMABUF_IMPORT=zero-copy forces CL_MEM_USE_HOST_PTR over the dma-buf mapping");
    } else if (d.type & CL_DEVICE_TYPE_CPU) {
        dev->set("route", "zero-copy");
        dev->set("route_reason", "CPU device: it works on the host pages of the dma-buf mapping (CL_MEM_USE_HOST_PTR)");
    } else if (d.host_unified) {
        dev->set("route", "zero-copy");
        dev->set("route_reason", "CL_DEVICE_HOST_UNIFIED_MEMORY: the device uses the dma-buf mapping in place");
    } else {
        dev->set("route", "device copy");
        dev->set("route_reason", "the device does not share host memory (no CL_DEVICE_HOST_UNIFIED_MEMORY): "
                                 "the ICD copies on import and the layer syncs on acquire/release");
    }
}

std::string blitter_verdict(const ClDevice &d, const i915::Gen9Info &node) {
    if (node.path.empty()) return "no Gen9 blitter: copies between imports go to the ICD";
    DeviceFacts facts;
    facts.type = d.type;
    facts.vendor_id = d.vendor_id;
    facts.has_pci = d.has_pci && parse_pci_address(d.pci, &facts.pci);
    const std::string why = device_mismatch(facts, node);
    if (why.empty()) return "matched: copies between zero-copy imports go to " + node.path;
    return "not matched (" + why + "): copies go to the ICD";
}

// Imports a duplicate of `fd` as a buffer on one device and asks the layer
// which route it took.
Json try_import(const ClDevice &d, int fd, size_t size) {
    Json r = Json::object();
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &d.id, nullptr, nullptr, &err);
    if (!ctx) {
        r.set("imported", false);
        r.set("error", err);
        r.set("reason", "clCreateContext failed");
        return r;
    }
    const int copy = dup(fd);
    cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(copy), 0};
    cl_mem mem = copy < 0 ? nullptr
                          : clCreateBufferWithProperties(ctx, props, CL_MEM_READ_WRITE, size, nullptr, &err);
    if (!mem) {
        if (copy >= 0) close(copy);  // a failed import leaves the fd with us
        r.set("imported", false);
        r.set("error", err);
        r.set("reason", "the import was refused (CLDMABUF_LOG=error prints the layer's reason on stderr)");
    } else {
        cl_uint route = 0;
        r.set("imported", true);
        if (clGetMemObjectInfo(mem, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr) == CL_SUCCESS)
            r.set("route", route == CL_DMA_BUF_ROUTE_COPY_CLDMABUF ? "device copy" : "zero-copy");
        else
            r.set("route", "unknown (the importer is not cldmabuf)");
        clReleaseMemObject(mem);  // closes the duplicate
    }
    clReleaseContext(ctx);
    return r;
}

// Every setting that is set, as the layer will read it, with where it came
// from; the settings file read, and the values the layer will refuse.
Json settings() {
    Json s = Json::object();
    if (const char *v = std::getenv("OPENCL_LAYERS")) s.set("OPENCL_LAYERS", v);
    const LoadedSettings loaded = load_settings(process_settings_inputs());
    for (const LoadedSetting &v : loaded.values) s.set(v.spec->env, v.value);
    return s;
}

Json settings_sources() {
    Json s = Json::object();
    const LoadedSettings loaded = load_settings(process_settings_inputs());
    s.set("file", loaded.file);
    Json from = Json::object();
    for (const LoadedSetting &v : loaded.values) from.set(v.spec->env, v.source);
    s.set("from", from);
    Json refused = Json::array();
    for (const std::string &r : loaded.refusals) refused.push(r);
    s.set("refused", refused);
    return s;
}

}  // namespace

Json build_report(const Options &opt, int *exit_code) {
    Json report = Json::object();
    std::string error;
    const std::vector<ClPlatform> with = enumerate_platforms(&error);
    const bool loaded = layer_mapped(opt.layer_path);
    Json layer = Json::object();
    layer.set("path", opt.layer_path);
    layer.set("loaded", loaded);
    if (!loaded)
        layer.set("reason", opt.layer_path.empty()                  ? "OPENCL_LAYERS is not set"
                            : access(opt.layer_path.c_str(), R_OK) != 0 ? opt.layer_path + " does not exist"
                                                                         : "the ICD loader did not load " +
                                                                               opt.layer_path +
                                                                               " (a loader without OPENCL_LAYERS "
                                                                               "support, or the layer's init failed)");
    report.set("layer", layer);
    report.set("settings", settings());
    report.set("settings_sources", settings_sources());

    std::vector<ClPlatform> without;
    std::string why_no_compare;
    const bool compared = !opt.self_exe.empty() && icd_only_view(opt.self_exe, opt.child_timeout_ms, &without, &why_no_compare);
    report.set("compared_with_icd_only", compared);
    if (!compared) report.set("compare_reason", why_no_compare.empty() ? "not asked" : why_no_compare);

    i915::Gen9Info node;
    Json blitter = find_blitter(&node);

    FdFacts fd;
    if (!opt.fd_spec.empty()) fd = inspect_fd(opt.fd_spec);

    Json platforms = Json::array();
    std::vector<bool> used(without.size(), false);
    int importers = 0, fd_imports = 0;
    if (!error.empty()) report.set("opencl_error", error);
    for (size_t pi = 0; pi < with.size(); ++pi) {
        const ClPlatform &p = with[pi];
        const ClPlatform *icd = nullptr;
        for (size_t j = 0; j < without.size() && !icd; ++j)
            if (!used[j] && without[j].name == p.name && without[j].vendor == p.vendor) {
                used[j] = true;
                icd = &without[j];
            }
        Json plat = Json::object();
        plat.set("index", static_cast<int>(pi));
        plat.set("name", p.name);
        plat.set("vendor", p.vendor);
        plat.set("version", p.version);
        if (icd) plat.set("added_by_layer", added(p.extensions, icd->extensions));
        plat.set("import_handle_types", hex_types(p.import_types));
        if (icd) {
            plat.set("icd_import_handle_types", hex_types(icd->import_types));
            plat.set("icd_has_dma_buf", has_extension(icd->extensions, kDmaBufExt));
        }
        if (Json prof = platform_profile(p.id); !prof.is_null()) plat.set("profile", prof);
        Json devices = Json::array();
        for (size_t di = 0; di < p.devices.size(); ++di) {
            const ClDevice &d = p.devices[di];
            const ClDevice *id = icd && di < icd->devices.size() && icd->devices[di].name == d.name ? &icd->devices[di]
                                                                                                    : nullptr;
            Json dev = Json::object();
            dev.set("index", static_cast<int>(di));
            dev.set("name", d.name);
            dev.set("type", type_name(d.type));
            dev.set("host_unified_memory", d.host_unified);
            dev.set("image_support", d.image_support);
            if (d.has_pci) dev.set("pci", d.pci);
            if (id) dev.set("added_by_layer", added(d.extensions, id->extensions));
            const bool icd_native = id && has_extension(id->extensions, kDmaBufExt);
            if (id) {
                dev.set("icd_has_dma_buf", icd_native);
                dev.set("icd_import_handle_types", hex_types(id->import_types));
                // Handle types the ICD offers that the layer's answer hides:
                // the layer takes every external-memory import and refuses
                // all but DMA_BUF (layer/import/request.cpp).
                Json hidden = Json::array();
                for (uint64_t t : id->import_types) {
                    bool kept = false;
                    for (uint64_t u : d.import_types) kept |= u == t;
                    if (!kept) {
                        char buf[24];
                        std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(t));
                        hidden.push(buf);
                    }
                }
                if (loaded && !hidden.items().empty()) dev.set("icd_handle_types_refused_by_layer", hidden);
            }
            const bool lists = has_extension(d.extensions, kDmaBufExt);
            const bool can = lists && (loaded || icd_native);
            dev.set("can_import", can);
            if (!lists) {
                dev.set("route", "none");
                dev.set("route_reason", loaded ? "the device does not list cl_khr_external_memory_dma_buf"
                                               : "no layer: run with OPENCL_LAYERS=" +
                                                     std::string(opt.layer_path.empty() ? "/path/to/libcldmabuf.so"
                                                                                        : opt.layer_path));
            } else if (!loaded) {
                dev.set("route", "forwarded to the ICD");
                dev.set("route_reason", "the layer is not loaded; the ICD's own cl_khr_external_memory_dma_buf imports");
            } else if (icd_native && !dmabuf_import_forced_to_layer()) {
                // layer/import/native.hpp: the ICD's own dma-buf import wins
                // unless CLDMABUF_DMABUF_IMPORT=layer.
                dev.set("route", "forwarded to the ICD");
                dev.set("route_reason", "the ICD imports DMA_BUF itself; the layer hands it the import untouched "
                                        "(CLDMABUF_DMABUF_IMPORT=layer keeps it in the layer)");
            } else {
                predict_route(d, &dev);
                if (icd_native)
                    dev.set("route_note", "the ICD has its own dma-buf import; CLDMABUF_DMABUF_IMPORT=layer keeps "
                                          "imports in the layer");
            }
            if (can) ++importers;
            dev.set("blitter", loaded ? blitter_verdict(d, node) : "no layer: no blitter");
            if (Json prof = device_profile(d.id); !prof.is_null()) dev.set("profile", prof);
            if (fd.is_dma_buf && can) {
                Json r = try_import(d, fd.fd, static_cast<size_t>(fd.size));
                if (r["imported"].as_bool()) ++fd_imports;
                dev.set("fd_import", r);
            }
            devices.push(dev);
        }
        plat.set("devices", devices);
        platforms.push(plat);
    }
    report.set("platforms", platforms);
    report.set("blitter", blitter);
    report.set("exporters", find_exporters(opt.probe_egl));
    if (opt.probe_va) report.set("va_api", va_report(with, without));
    if (!opt.fd_spec.empty()) {
        fd.json.set("imported_on_devices", fd_imports);
        report.set("fd", fd.json);
    }
    release(fd);

    Json verdict = Json::object();
    verdict.set("devices_that_import", importers);
    verdict.set("can_import", importers > 0);
    if (importers == 0)
        verdict.set("reason", with.empty() ? (error.empty() ? "no OpenCL platform" : error)
                              : !loaded    ? "the layer is not loaded and no ICD imports dma-bufs itself"
                                           : "no device lists cl_khr_external_memory_dma_buf");
    report.set("verdict", verdict);
    *exit_code = importers == 0 ? kExitCannotImport
                 : (!opt.fd_spec.empty() && fd_imports == 0) ? kExitFdRefused
                                                             : kExitOk;
    return report;
}

namespace {

const char kUsage[] =
    "usage: cldmabuf-info [--json] [--fd N | --fd /proc/PID/fd/N] [--layer PATH] [--no-egl] [--no-va] [-v]\n"
    "  What the cldmabuf layer adds to each OpenCL platform and device, which import\n"
    "  route a dma-buf would take, the Gen9 blitter, and the dma-buf exporters here.\n"
    "  --json     machine-readable output\n"
    "  --fd       inspect one fd (this process's, or another's through /proc) and import it\n"
    "  --layer    the layer to use (default: $OPENCL_LAYERS, else the installed one)\n"
    "  --no-egl   do not load libEGL\n"
    "  --no-va    do not open a VA-API display (no cl_intel_va_api_media_sharing pairing)\n"
    "  -v, --verbose\n"
    "             also show what the probed libraries (Mesa, libva, the ICDs) print on\n"
    "             stderr; by default only the layer's and the tool's own lines are shown\n"
    "exit: 0 dma-bufs can be imported, 1 nothing can import, 2 usage, 3 --fd refused\n";

}  // namespace

int run_info(int argc, char **argv, const std::string &self_exe, std::string *out, std::string *err) {
    Options opt;
    opt.self_exe = self_exe;
    if (const char *l = std::getenv("OPENCL_LAYERS")) opt.layer_path = l;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json") opt.json = true;
        else if (a == "--no-egl") opt.probe_egl = false;
        else if (a == "--no-va") opt.probe_va = false;
        else if (a == "-v" || a == "--verbose") opt.verbose = true;
        else if ((a == "--fd" || a == "--layer") && i + 1 < argc) (a == "--fd" ? opt.fd_spec : opt.layer_path) = argv[++i];
        else if (a.rfind("--fd=", 0) == 0) opt.fd_spec = a.substr(5);
        else if (a.rfind("--layer=", 0) == 0) opt.layer_path = a.substr(8);
        else if (a == "--help" || a == "-h") {
            *out += kUsage;
            return kExitOk;
        } else {
            *err += "cldmabuf-info: unknown argument '" + a + "'\n" + kUsage;
            return kExitUsage;
        }
    }
    int code = kExitOk;
    Json report;
    {
        // The report is what the probes found; what the libraries said on
        // the way (Mesa's and libva's attempts on every node) is noise there,
        // shown with -v.  The layer's own lines are kept either way.  With
        // --fd 2 the fd to inspect is stderr itself, which must stay as given.
        std::optional<QuietStderr> quiet;
        if (!opt.verbose && opt.fd_spec != "2") quiet.emplace();
        report = build_report(opt, &code);
    }
    *out += opt.json ? report.dump() : render_text(report);
    return code;
}

}  // namespace cldmabuf::info
