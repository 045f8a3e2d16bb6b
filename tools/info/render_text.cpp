// The human form of the cldmabuf-info report (the JSON tree, read top down).
#include <string>

#include "tools/info/report.hpp"

namespace cldmabuf::info {
namespace {

std::string words(const Json &list, const char *none = "none") {
    std::string s;
    for (const Json &e : list.items()) s += (s.empty() ? "" : " ") + e.as_string();
    return s.empty() ? none : s;
}

void line(std::string &out, int indent, const std::string &text) {
    out += std::string(static_cast<size_t>(indent), ' ') + text + "\n";
}

// One profile fact: "value (where it came from)".
std::string fact(const Json &f) {
    const Json &v = f["value"];
    const std::string value = v.kind() == Json::Kind::boolean ? (v.as_bool() ? "yes" : "no") : v.as_string();
    return value + " (" + f["from"].as_string() + ")";
}

// The platform's profile (layer/icd/profile.hpp), one fact a line.
void platform_profile_lines(std::string &out, const Json &p) {
    line(out, 2, "profile: ICD " + fact(p["icd"]) + ", OpenCL " + fact(p["slots_version"]) + " for its slots");
    std::string failed = "failed host steps: " + fact(p["failed_host_steps"]);
    if (p["failed_host_steps"].has("why")) failed += ": " + p["failed_host_steps"]["why"].as_string();
    line(out, 4, failed);
    line(out, 4, "its own semaphores: " + fact(p["native_semaphores"]));
    line(out, 4, "its own cl_khr_egl_image: " + fact(p["native_egl_image"]) +
                     ", cl_khr_gl_sharing: " + fact(p["native_gl_sharing"]));
    line(out, 4, "marker watch: " + fact(p["marker_watch"]));
}

void device_profile_lines(std::string &out, const Json &d) {
    if (!d["measured"].as_bool()) {
        line(out, 4, "profile: not measured in this process (" + d["note"].as_string() + ")");
        return;
    }
    line(out, 4, "profile:");
    for (const auto &[kind, f] : d["zero_copy"].fields()) line(out, 6, "zero-copy of " + kind + " dma-bufs: " + fact(f));
    for (const auto &[route, f] : d["image_routes"].fields()) line(out, 6, "image route " + route + ": " + fact(f));
    line(out, 6, "pinned staging refused: " + fact(d["staging_refused"]) +
                     ", registration refused: " + fact(d["registration_refused"]));
}

}  // namespace

std::string render_text(const Json &r) {
    std::string out;
    const Json &layer = r["layer"];
    line(out, 0, "layer: " + (layer["path"].as_string().empty() ? std::string("(none)") : layer["path"].as_string()) +
                     (layer["loaded"].as_bool() ? " (loaded)" : " (NOT loaded: " + layer["reason"].as_string() + ")"));
    std::string set;
    const Json &sources = r["settings_sources"];
    for (const auto &[k, v] : r["settings"].fields()) {
        if (k == "OPENCL_LAYERS") continue;
        set += " " + k + "=" + v.as_string();
        const std::string from = sources["from"][k].as_string();
        if (!from.empty() && from != "environment") set += " (" + from + ")";
    }
    line(out, 0, "settings:" + (set.empty() ? std::string(" defaults (CLDMABUF_IMPORT=auto, blitter on)") : set));
    if (!sources["file"].as_string().empty()) line(out, 0, "settings file: " + sources["file"].as_string());
    for (const Json &refusal : sources["refused"].items()) line(out, 1, "refused: " + refusal.as_string());
    if (!r["compared_with_icd_only"].as_bool())
        line(out, 0, "(no comparison with the ICDs alone: " + r["compare_reason"].as_string() + ")");
    if (r.has("opencl_error")) line(out, 0, "OpenCL: " + r["opencl_error"].as_string());

    for (const Json &p : r["platforms"].items()) {
        line(out, 0, "platform " + std::to_string(p["index"].as_int()) + ": " + p["name"].as_string() + " (" +
                         p["vendor"].as_string() + "), " + p["version"].as_string());
        if (p.has("added_by_layer")) line(out, 2, "added by the layer: " + words(p["added_by_layer"]));
        if (p.has("icd_import_handle_types"))
            line(out, 2, "the ICD's own import handle types: " + words(p["icd_import_handle_types"]));
        if (p.has("profile")) platform_profile_lines(out, p["profile"]);
        for (const Json &d : p["devices"].items()) {
            line(out, 2, "device " + std::to_string(d["index"].as_int()) + ": " + d["name"].as_string() + " (" +
                             d["type"].as_string() +
                             (d["host_unified_memory"].as_bool() ? ", host-unified memory" : "") +
                             (d.has("pci") ? ", PCI " + d["pci"].as_string() : "") + ")");
            if (d.has("added_by_layer")) line(out, 4, "added by the layer: " + words(d["added_by_layer"]));
            if (d.has("icd_has_dma_buf"))
                line(out, 4, std::string("the ICD alone: ") +
                                 (d["icd_has_dma_buf"].as_bool() ? "has cl_khr_external_memory_dma_buf"
                                                                 : "no cl_khr_external_memory_dma_buf") +
                                 ", import handle types " + words(d["icd_import_handle_types"]));
            if (d.has("icd_handle_types_refused_by_layer"))
                line(out, 4, "warning: the layer refuses the ICD's own handle types " +
                                 words(d["icd_handle_types_refused_by_layer"]));
            line(out, 4, "import route: " + d["route"].as_string() + " (" + d["route_reason"].as_string() + ")");
            if (d.has("route_note")) line(out, 4, "note: " + d["route_note"].as_string());
            line(out, 4, "blitter: " + d["blitter"].as_string());
            if (d.has("profile")) device_profile_lines(out, d["profile"]);
            if (d.has("fd_import")) {
                const Json &f = d["fd_import"];
                line(out, 4, f["imported"].as_bool()
                                 ? "fd import: ok, " + f["route"].as_string()
                                 : "fd import: refused, error " + std::to_string(f["error"].as_int()) + " (" +
                                       f["reason"].as_string() + ")");
            }
        }
    }

    const Json &b = r["blitter"];
    if (b["available"].as_bool())
        line(out, 0, "blitter: " + b["node"].as_string() + " (i915 " + b["device_id"].as_string() + " " +
                         b["platform"].as_string() + (b.has("pci") ? ", PCI " + b["pci"].as_string() : "") + ")");
    else
        line(out, 0, "blitter: none (" + b["reason"].as_string() + ")");

    const Json &e = r["exporters"];
    line(out, 0, "exporters:");
    line(out, 2, "dma-heaps: " + words(e["dma_heaps"]));
    line(out, 2, std::string("udmabuf: ") + (e["udmabuf"].as_bool() ? "/dev/udmabuf" : "no"));
    std::string nodes;
    for (const Json &n : e["render_nodes"].items())
        nodes += (nodes.empty() ? "" : ", ") + n["node"].as_string() + " " +
                 (n["driver"].as_string().empty() ? "?" : n["driver"].as_string()) +
                 (n.has("pci") ? " at " + n["pci"].as_string() : "");
    line(out, 2, "render nodes: " + (nodes.empty() ? std::string("none") : nodes));
    const Json &egl = e["egl"];
    if (egl["dma_buf_export"].as_bool())
        line(out, 2, "EGL: " + egl["vendor"].as_string() + " EGL " + egl["version"].as_string() +
                         ", dma-buf export (EGL_MESA_image_dma_buf_export)");
    else
        line(out, 2, "EGL: no dma-buf export (" + egl["reason"].as_string() + ")");

    if (r.has("va_api")) {
        const Json &va = r["va_api"];
        const Json &dpy = va["display"];
        line(out, 0, dpy.has("node") ? "va-api: " + dpy["node"].as_string() + " (" + dpy["vendor"].as_string() + ")"
                                     : "va-api: no display (" + dpy["reason"].as_string() + ")");
        for (const Json &p : va["platforms"].items()) {
            std::string l = "platform " + std::to_string(p["index"].as_int()) + ": cl_intel_va_api_media_sharing ";
            if (!p["extension"].as_bool()) l += "not listed";
            else l += "by the " + p["by"].as_string();
            if (p.has("paired")) l += ", pairs with: " + words(p["paired"]);
            if (p.has("error")) l += ", pairing refused (error " + std::to_string(p["error"].as_int()) + ")";
            line(out, 2, l);
        }
    }
    if (r.has("fd")) {
        const Json &f = r["fd"];
        std::string head = "fd " + f["source"].as_string() + ": ";
        if (f["is_dma_buf"].as_bool()) {
            head += "dma-buf, " + std::to_string(f["size"].as_int()) + " bytes";
            if (f.has("inode")) head += ", inode " + std::to_string(f["inode"].as_int());
            head += f.has("exp_name") ? ", exporter " + f["exp_name"].as_string() : ", exporter unknown (no exp_name in fdinfo)";
            head += ", imported on " + std::to_string(f["imported_on_devices"].as_int()) + " device(s)";
        } else {
            head += "refused: " + f["reason"].as_string();
        }
        line(out, 0, head);
    }
    const Json &v = r["verdict"];
    line(out, 0, v["can_import"].as_bool()
                     ? "verdict: dma-bufs can be imported on " + std::to_string(v["devices_that_import"].as_int()) +
                           " device(s)"
                     : "verdict: nothing can import dma-bufs (" + v["reason"].as_string() + ")");
    return out;
}

}  // namespace cldmabuf::info
