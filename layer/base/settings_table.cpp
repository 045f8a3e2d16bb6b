// The one table of every setting, and what is derived from it (file keys,
// accepted values, the docs table).  docs/user-guide.md's "## Settings" table
// is settings_markdown() verbatim; tests/unit/test_settings_table.cpp keeps
// the two, and the CLDMABUF_ names read in layer/, equal.
#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>

#include "layer/base/settings.hpp"

namespace cldmabuf {
namespace {

using K = SettingKind;

// Order: where the file lookup starts, then the user guide's order
// (logging, import, hand-off, mapping cache, blitter, EGL, semaphores), then
// the tests' CLDMABUF_DEBUG.
const SettingSpec table[] = {
    {"CLDMABUF_SETTINGS_FILE", K::path, nullptr, 0, 0,
     "`$XDG_CONFIG_HOME/cldmabuf/settings.txt` (or `~/.config/...`), then `/etc/cldmabuf/settings.txt`",
     "the settings file to read (environment only; it must exist)", true},
    {"CLDMABUF_LOG", K::word, "none|off|error|warn|warning|info|debug", 0, 0, "`error`",
     "one line per event on stderr at this level and above (`off` is `none`, `warning` is `warn`)"},
    {"CLDMABUF_STATS", K::flag, nullptr, 0, 0, "`0`", "`1`: summary line at exit"},
    {"CLDMABUF_IMPORT", K::word, "auto|zero-copy|zerocopy|copy", 0, 0, "`auto`",
     "`copy` forces the device-copy route, `zero-copy` forces `USE_HOST_PTR`"},
    {"CLDMABUF_DMABUF_IMPORT", K::word, "icd|layer", 0, 0, "`icd`",
     "where the ICD imports dma-bufs itself it gets the import; `layer` keeps it in the layer ([icds.md](icds.md))"},
    {"CLDMABUF_ZERO_COPY_CHECK", K::word, "on|off", 0, 0, "`on`",
     "`off` trusts `CL_DEVICE_HOST_UNIFIED_MEMORY` without checking the ICD uses the pages in place"},
    {"CLDMABUF_STAGING", K::word, "auto|register|pinned|off", 0, 0, "`auto`",
     "copy route on devices without host-unified memory: `auto` registers each import's dma-buf with the ICD (a "
     "`CL_MEM_USE_HOST_PTR` buffer over a mapping of it, pinned by NVIDIA) else two pinned 16 MiB slots; `register`, "
     "`pinned`: that way on every device; `off`: straight from the mapping"},
    {"CLDMABUF_COPY_THREADS", K::integer, nullptr, 1, 64, "half the CPUs, 1 to 8",
     "threads for the copy route's CPU copies of 2 MiB and more (layer/handoff/parallel_copy.hpp)"},
    {"CLDMABUF_STEP_POLL", K::word, "auto|on|off", 0, 0, "`auto`",
     "queued acquires and releases: `on` asks their markers' status until they end as well as waiting for the "
     "ICD's callback (`auto`: on NVIDIA, whose callbacks come about 20 ms late behind a transfer)"},
    {"CLDMABUF_FENCE_TIMEOUT_MS", K::integer, nullptr, 0, 3600 * 1000 - 1, "`1000`",
     "bound on every fence wait, in milliseconds"},
    {"CLDMABUF_FAILED_EVENTS", K::word, "propagate|sidetable", 0, 0, "per ICD",
     "`propagate` (a failed step fails the ICD's commands behind it: NVIDIA) or `sidetable` (they run; a failed "
     "acquire detaches its dma-bufs from them: PoCL, rusticl, NEO, others) ([layer-rules.md](layer-rules.md))"},
    {"CLDMABUF_MAP_CACHE_MB", K::integer, nullptr, 0, 1 << 20, "`512` (`64` on 32-bit)",
     "a dma-buf imported again takes the mapping its last import made: up to N MiB of parked mappings (at most 64), "
     "each dropped once only the layer holds its dma-buf; `0`: off ([benchmarks.md](benchmarks.md))"},
    {"CLDMABUF_BLT", K::word, "on|off", 0, 0, "`on`", "`off`: no blitter, copies go to the ICD"},
    {"CLDMABUF_BLT_NODE", K::path, nullptr, 0, 0, "scan `/dev/dri/renderD*`",
     "the render node to use for the blitter"},
    {"CLDMABUF_BLT_EXPORTERS", K::word, "own|any", 0, 0, "`own`",
     "`any`: the blitter also takes dma-bufs other exporters made"},
    {"CLDMABUF_BLT_SEMAPHORE_FENCES", K::word, "auto|on|off", 0, 0, "`auto`",
     "a semaphore wait right before a blitter copy becomes the batch's fence-in and a signal right after it its "
     "fence-out: `auto` where the layer saw no other enqueue between them and handed out no ICD enqueue it cannot "
     "see; `on` on the application's word that it enqueues nothing between them; `off` never "
     "([semaphores.md](semaphores.md))"},
    {"CLDMABUF_ALLOC_EXPORTER", K::word, "auto|i915|dma-heap|udmabuf", 0, 0, "`auto`",
     "the exporters `CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF` may use: `auto` tries i915 GEM, then the system dma-heap, "
     "then udmabuf; a name allows that one only ([allocator.md](allocator.md))"},
    {"CLDMABUF_EGL", K::word, "auto|off", 0, 0, "`auto`",
     "`auto`: the layer serves the GL/EGL calls where the ICD does not; `off` leaves EGL interop out "
     "([egl.md](egl.md))"},
    {"CLDMABUF_EGL_LIB", K::path, nullptr, 0, 0, "`libEGL.so.1`", "the libEGL to load (a path or a library name)"},
    {"CLDMABUF_VA_LIBRARY", K::path, nullptr, 0, 0, "`libva.so.2`",
     "the libva to load for cl_intel_va_api_media_sharing (a path or a library name; docs/va-api.md)"},
    {"CLDMABUF_SEMAPHORES", K::word, "auto|off", 0, 0, "`auto`",
     "`cl_khr_semaphore` with sync_fd on ICDs without it; `off` adds none ([semaphores.md](semaphores.md))"},
    {"CLDMABUF_EXPLICIT_FENCES", K::word, "auto|off", 0, 0, "`auto`",
     "acquire waits on the dma-buf's fences as one sync_file and release puts its own fence into written "
     "dma-bufs where the kernel allows; `off` polls and attaches nothing ([semaphores.md](semaphores.md))"},
    // Last: not a user's decision but the tests' instruments (debug_word_table
    // below), so not in the user guide's table either.
    {"CLDMABUF_DEBUG", K::debug, nullptr, 0, 0, "none",
     "test instruments, not for users: each word makes the layer take a path a test must reach "
     "([tests/README.md](../tests/README.md), \"CLDMABUF_DEBUG\")",
     true},
};

// The words of CLDMABUF_DEBUG.  tests/README.md documents each one
// (tests/unit/check_knobs.py checks that it does).
const DebugWordSpec debug_words[] = {
    {"egl-force-copy", DebugWord::egl_force_copy, true,
     "every EGL export is taken as tiled, so the GPU copy path runs on drivers that export LINEAR (llvmpipe); "
     "read on every import"},
    {"zero-copy-fail", DebugWord::zero_copy_fail, false,
     "every zero-copy check reports an ICD that copies: every import takes the copy route"},
    {"semaphores-force", DebugWord::semaphores_force, false,
     "the layer's `cl_khr_semaphore` (with sync_fd) over an ICD's own"},
    {"worker-manual", DebugWord::worker_manual, false,
     "a worker job waits, held, until a test runs it (one job of one queue at a time): tests/explore "
     "schedules the layer's host steps"},
    {"egl-force", DebugWord::egl_force, false,
     "the layer's GL/EGL calls (`cl_khr_egl_image`, `cl_khr_gl_sharing`) over an ICD's own"},
    {"finish-waits-steps", DebugWord::finish_waits_steps, false,
     "clFinish of a queue whose steps are polled waits for them on the caller's thread before the ICD's "
     "clFinish: an experiment for the GPU machine, off until measured there"},
    {"small-copy-limit", DebugWord::small_copy_limit, false,
     "the copy route's fast limit is 1 KiB instead of 1 MiB, so that the explorer's 4 KiB imports take the ways "
     "of large transfers (the registration, a large release)"},
};

}  // namespace

std::span<const SettingSpec> setting_table() { return table; }

std::span<const DebugWordSpec> debug_word_table() { return debug_words; }

std::string debug_words_known() {
    std::string out;
    for (const DebugWordSpec &w : debug_words) out += (out.empty() ? "" : ", ") + std::string(w.word);
    return out;
}

const SettingSpec *find_setting(std::string_view env_name) {
    for (const SettingSpec &s : table)
        if (env_name == s.env) return &s;
    return nullptr;
}

std::string setting_file_key(const SettingSpec &spec) {
    std::string key(spec.env + std::char_traits<char>::length("CLDMABUF_"));
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
    return key;
}

std::string setting_accepted(const SettingSpec &spec) {
    switch (spec.kind) {
    case SettingKind::word: {
        std::string out(spec.words);
        for (size_t at = out.find('|'); at != std::string::npos; at = out.find('|', at)) out.replace(at, 1, ", ");
        return out;
    }
    case SettingKind::integer:
        return "an integer " + std::to_string(spec.min) + ".." + std::to_string(spec.max);
    case SettingKind::flag: return "1, 0, on, off, true, false, yes, no";
    case SettingKind::path: return "a non-empty path";
    case SettingKind::debug: return "words, comma- or space-separated: " + debug_words_known();
    }
    return {};
}

std::string settings_markdown() {
    std::string out =
        "| variable | settings file | accepted | default | effect |\n"
        "|---|---|---|---|---|\n";
    for (const SettingSpec &s : table) {
        if (s.kind == SettingKind::debug) continue;  // not a user's: tests/README.md
        const std::string key = s.env_only ? std::string("(environment only)")
                                           : "`cldmabuf." + setting_file_key(s) + "`";
        out += "| `" + std::string(s.env) + "` | " + key + " | " + setting_accepted(s) + " | " + s.default_text +
               " | " + s.effect + " |\n";
    }
    return out;
}

}  // namespace cldmabuf
