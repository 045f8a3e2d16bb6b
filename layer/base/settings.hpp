// Every setting of the layer in one table, read from the CLDMABUF_* environment
// variables and from a settings file in the manner of the Khronos layers'
// settings files (vk_layer_settings.txt): lines `cldmabuf.<key> = <value>`.
//
// Sources, highest first: the environment variable; the settings file
// (CLDMABUF_SETTINGS_FILE, else $XDG_CONFIG_HOME/cldmabuf/settings.txt or
// ~/.config/cldmabuf/settings.txt, else /etc/cldmabuf/settings.txt); the
// default.  Every value is validated once: a refused one gets one LOG_ERROR
// line naming the setting, its source and the accepted values, and the
// default is used.
//
// The table holds what a user decides.  What exists only so that a test can
// reach a path is a word of CLDMABUF_DEBUG (below; tests/README.md), in the
// manner of Mesa's RUSTICL_DEBUG: one variable, a list of words.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cldmabuf {

enum class SettingKind {
    word,     // one of `words`
    integer,  // decimal, min..max
    flag,     // 1/0, on/off, true/false, yes/no; setting() answers "1" or "0"
    path,     // any non-empty text (a file, a device node, a library name)
    debug,    // CLDMABUF_DEBUG: words of debug_word_table(), comma- or space-separated
};

struct SettingSpec {
    const char *env;           // "CLDMABUF_FENCE_TIMEOUT_MS"; the file key is derived from it
    SettingKind kind;
    const char *words;         // word: "auto|zero-copy|copy" (aliases included); else nullptr
    long long min, max;        // integer
    const char *default_text;  // what applies when unset: docs and refusal lines
    const char *effect;        // the docs' "effect" column (markdown)
    // Not in the settings file: CLDMABUF_SETTINGS_FILE names the file;
    // CLDMABUF_DEBUG is a test's, which a file left behind must not carry.
    bool env_only = false;
};

std::span<const SettingSpec> setting_table();
const SettingSpec *find_setting(std::string_view env_name);
// "CLDMABUF_FENCE_TIMEOUT_MS" -> "fence_timeout_ms" (the file says cldmabuf.fence_timeout_ms).
std::string setting_file_key(const SettingSpec &spec);
// "auto, zero-copy, copy" / "an integer 0..3599999": for refusal lines and the docs.
std::string setting_accepted(const SettingSpec &spec);
// The docs table (docs/user-guide.md, "## Settings"), one row per user
// setting: CLDMABUF_DEBUG, the tests' row, is documented in tests/README.md.
std::string settings_markdown();

// The drop-in for std::getenv("CLDMABUF_..."): the validated value from the
// environment or the settings file, or nullptr for "use the default".  The
// pointer stays valid for the life of the process.  A name not in the table
// answers std::getenv(name), so a new variable keeps working before its row.
const char *setting(const char *env_name);

// Layer init: read the sources once and log every refused value (once).
void validate_settings();

// ---- the loading step, on explicit inputs (unit tests) ----------------------
struct SettingsInputs {
    std::function<const char *(const char *)> getenv;
    std::string system_file = "/etc/cldmabuf/settings.txt";
};

struct LoadedSetting {
    const SettingSpec *spec;
    std::string value;   // validated, normalised (flags: "1"/"0")
    std::string source;  // "environment" or "<file>:<line>"
};

struct LoadedSettings {
    std::vector<LoadedSetting> values;  // only the settings that are set
    std::string file;                   // the settings file read; empty: none
    std::vector<std::string> refusals;  // one log line each (without the "cldmabuf: error: ")
    unsigned debug = 0;                 // CLDMABUF_DEBUG's known words (DebugWord bits)

    const LoadedSetting *find(std::string_view env_name) const;
};

// The settings file these inputs select, or "" for none.  An unreadable
// candidate other than a missing per-user or system file adds a refusal.
std::string settings_file_path(const SettingsInputs &in, std::vector<std::string> *refusals);
LoadedSettings load_settings(const SettingsInputs &in);
SettingsInputs process_settings_inputs();

// Tests: load again from `in` (setting() answers from it) and log its refusals.
void reload_settings(const SettingsInputs &in);

// ---- CLDMABUF_DEBUG: the test instruments ------------------------------------
// CLDMABUF_DEBUG=word,word (commas or spaces between): switches that make the
// layer take a path a test must reach on a machine that would not take it by
// itself.  No user decides them; tests/README.md documents each word.  The
// list is read with the other settings, at load; an unknown word gets one
// log line naming it and the known words, and the other words still apply.
// A word outweighs the user setting it bends (zero-copy-fail over
// CLDMABUF_ZERO_COPY_CHECK, semaphores-force over CLDMABUF_SEMAPHORES,
// egl-force over CLDMABUF_EGL).
enum class DebugWord : unsigned {
    egl_force_copy = 1u << 0,    // every EGL export taken as tiled: the GPU copy path (layer/egl)
    zero_copy_fail = 1u << 1,    // every zero-copy check reports a copying ICD (layer/import)
    semaphores_force = 1u << 2,  // the layer's cl_khr_semaphore over an ICD's own (layer/sync)
    worker_manual = 1u << 3,     // worker jobs wait until a test runs each one (layer/core/worker)
    egl_force = 1u << 4,         // the layer's GL/EGL calls over an ICD's own (layer/egl)
    finish_waits_steps = 1u << 5,  // clFinish waits for its queue's polled steps first (layer/core/host_step)
    small_copy_limit = 1u << 6,  // the copy route's fast limit is 1 KiB, not 1 MiB (layer/handoff/transfers)
};

struct DebugWordSpec {
    const char *word;  // "egl-force-copy"
    DebugWord bit;
    // debug_on() reads the environment on each call: tests switch the word
    // within one process (egl-force-copy, per import).  Otherwise the word is
    // as the list was at load.
    bool every_call;
    const char *effect;  // for the log and tests/README.md
};

std::span<const DebugWordSpec> debug_word_table();
// "egl-force-copy, zero-copy-fail, semaphores-force"
std::string debug_words_known();

struct DebugWords {
    unsigned mask = 0;                 // DebugWord bits
    std::string known;                 // the known words, in the order given, joined by ","
    std::vector<std::string> unknown;  // in the order given, each once
};
// Splits on commas, spaces and tabs; empty words are skipped; words match
// exactly (lower case).  Pure: the loader and the unit tests use it.
DebugWords parse_debug_words(std::string_view text);
// The one log line for a list with unknown words (without "cldmabuf: error: ").
std::string debug_refusal(const DebugWords &words, const std::string &source);

// Whether CLDMABUF_DEBUG names `word`.
bool debug_on(DebugWord word);

}  // namespace cldmabuf
