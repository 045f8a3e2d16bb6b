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
};

struct SettingSpec {
    const char *env;           // "CLDMABUF_FENCE_TIMEOUT_MS"; the file key is derived from it
    SettingKind kind;
    const char *words;         // word: "auto|zero-copy|copy" (aliases included); else nullptr
    long long min, max;        // integer
    const char *default_text;  // what applies when unset: docs and refusal lines
    const char *effect;        // the docs' "effect" column (markdown)
    bool env_only = false;     // CLDMABUF_SETTINGS_FILE: names the file, so not in it
    bool every_call = false;   // setting() reads the environment on each call (tests flip it)
};

std::span<const SettingSpec> setting_table();
const SettingSpec *find_setting(std::string_view env_name);
// "CLDMABUF_FENCE_TIMEOUT_MS" -> "fence_timeout_ms" (the file says cldmabuf.fence_timeout_ms).
std::string setting_file_key(const SettingSpec &spec);
// "auto, zero-copy, copy" / "an integer 0..3599999": for refusal lines and the docs.
std::string setting_accepted(const SettingSpec &spec);
// The docs table (docs/user-guide.md, "## Settings"), one row per setting.
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

    const LoadedSetting *find(std::string_view env_name) const;
};

// The settings file these inputs select, or "" for none.  An unreadable
// candidate other than a missing per-user or system file adds a refusal.
std::string settings_file_path(const SettingsInputs &in, std::vector<std::string> *refusals);
LoadedSettings load_settings(const SettingsInputs &in);
SettingsInputs process_settings_inputs();

// Tests: load again from `in` (setting() answers from it) and log its refusals.
void reload_settings(const SettingsInputs &in);

}  // namespace cldmabuf
