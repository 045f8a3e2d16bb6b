// Reading the settings: the environment, then the settings file, then the
// default; each value validated against its row of the table once.
//
// The file is read with plain libc, not through the kernel seam: settings are
// read at layer init, before and independently of anything the seam serves,
// and unit tests replace the seam while settings stay those of the process.
#include "layer/base/settings.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "layer/base/log.hpp"

namespace cldmabuf {
namespace {

constexpr size_t kMaxFileBytes = 64 * 1024;  // a settings file is a few lines; refuse anything else
constexpr char kPrefix[] = "cldmabuf.";

std::string plain(const char *markdown) {
    std::string s(markdown);
    s.erase(std::remove(s.begin(), s.end(), '`'), s.end());
    return s;
}

// Flags answer "1"/"0" so that every reader of the raw variable (v == "1",
// v != "0") reads the same thing whichever spelling the user chose.
bool valid_value(const SettingSpec &spec, const std::string &v, std::string *normalised) {
    *normalised = v;
    if (v.empty()) return false;
    switch (spec.kind) {
    case SettingKind::word: {
        const std::string_view words(spec.words);
        for (size_t start = 0;;) {
            const size_t bar = words.find('|', start);
            if (words.substr(start, bar == std::string_view::npos ? bar : bar - start) == v) return true;
            if (bar == std::string_view::npos) return false;
            start = bar + 1;
        }
    }
    case SettingKind::integer: {
        const size_t digits = v[0] == '-' ? 1 : 0;
        if (v.size() == digits || v.find_first_not_of("0123456789", digits) != std::string::npos) return false;
        errno = 0;
        const long long n = std::strtoll(v.c_str(), nullptr, 10);
        return errno == 0 && n >= spec.min && n <= spec.max;
    }
    case SettingKind::flag:
        for (const char *on : {"1", "on", "true", "yes"})
            if (v == on) return *normalised = "1", true;
        for (const char *off : {"0", "off", "false", "no"})
            if (v == off) return *normalised = "0", true;
        return false;
    case SettingKind::path: return true;
    case SettingKind::debug: {
        const DebugWords words = parse_debug_words(v);
        *normalised = words.known;
        return words.unknown.empty();
    }
    }
    return false;
}

std::string refusal(const SettingSpec &spec, const std::string &shown, const std::string &value,
                    const std::string &source) {
    return "setting " + shown + "=" + value + " (" + source + ") refused: accepted " + setting_accepted(spec) +
           "; using the default (" + plain(spec.default_text) + ")";
}

std::string trim(std::string_view s) {
    const size_t b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return {};
    const size_t e = s.find_last_not_of(" \t");
    return std::string(s.substr(b, e - b + 1));
}

std::string known_keys() {
    std::string out;
    for (const SettingSpec &s : setting_table()) {
        if (s.env_only) continue;
        out += (out.empty() ? "" : ", ") + setting_file_key(s);
    }
    return out;
}

// Reads the whole file; non-blocking open so a FIFO named by mistake cannot
// hang layer init.  Plain libc, not the kernel seam: a configuration file is
// not the kernel interface the seam stands in for (and the seam's fakes are
// installed by tests after the settings are read).  Returns the errno of a missing file, -1 for other errors
// (with *why), 0 on success.
int read_settings_file(const std::string &path, std::string *text, std::string *why) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return ENOENT;
        *why = std::strerror(errno);
        return -1;
    }
    struct stat st {};
    int r = 0;
    if (::fstat(fd, &st) != 0) {
        *why = std::strerror(errno);
        r = -1;
    } else if (!S_ISREG(st.st_mode)) {
        *why = "not a regular file";
        r = -1;
    } else if (static_cast<size_t>(st.st_size) > kMaxFileBytes) {
        *why = "larger than 64 KiB";
        r = -1;
    } else {
        text->resize(static_cast<size_t>(st.st_size));
        size_t got = 0;
        while (got < text->size()) {
            const ssize_t n = ::read(fd, text->data() + got, text->size() - got);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += static_cast<size_t>(n);
        }
        text->resize(got);
    }
    ::close(fd);
    return r;
}

// `refused_env`: settings whose variable was refused take their default, as
// the refusal line says, not the file's value.
void parse_file(const std::string &path, const std::string &text, const std::vector<const SettingSpec *> &refused_env,
                LoadedSettings *out) {
    std::vector<LoadedSetting> from_file;
    size_t line_no = 0;
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string_view raw(text.data() + start, end - start);
        start = end + 1;
        ++line_no;
        if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);  // files written on Windows
        const std::string line = trim(raw);
        if (line.empty() || line[0] == '#') continue;
        const std::string where = path + ":" + std::to_string(line_no);
        const size_t eq = line.find('=');
        const std::string key = trim(std::string_view(line).substr(0, eq == std::string::npos ? 0 : eq));
        if (eq == std::string::npos || key.rfind(kPrefix, 0) != 0 || key.size() == sizeof kPrefix - 1) {
            // Quoted short: the log line must fit log_line's buffer with its advice intact.
            const std::string shown = line.size() > 80 ? line.substr(0, 77) + "..." : line;
            out->refusals.push_back("settings file " + where + ": malformed line \"" + shown +
                                    "\" (expected cldmabuf.<key> = <value>); line ignored");
            continue;
        }
        const SettingSpec *spec = nullptr;
        for (const SettingSpec &s : setting_table())
            if (!s.env_only && key.compare(sizeof kPrefix - 1, std::string::npos, setting_file_key(s)) == 0)
                spec = &s;
        if (!spec) {
            out->refusals.push_back("settings file " + where + ": unknown setting " + key + " (accepted keys: " +
                                    known_keys() + "); line ignored");
            continue;
        }
        const std::string value = trim(std::string_view(line).substr(eq + 1));
        std::string normalised;
        if (!valid_value(*spec, value, &normalised)) {
            out->refusals.push_back(refusal(*spec, key, value, where));
            // The default, not an earlier line's value: what the line says is refused.
            std::erase_if(from_file, [&](const LoadedSetting &l) { return l.spec == spec; });
            continue;
        }
        std::erase_if(from_file, [&](const LoadedSetting &l) { return l.spec == spec; });  // the last line wins
        from_file.push_back({spec, normalised, where});
    }
    for (LoadedSetting &l : from_file)
        if (!out->find(l.spec->env) && std::find(refused_env.begin(), refused_env.end(), l.spec) == refused_env.end())
            out->values.push_back(std::move(l));
}

struct State {
    LoadedSettings loaded;
    std::function<const char *(const char *)> getenv;
};

std::mutex load_mutex;
std::atomic<const State *> current{nullptr};

// Old states are never freed: setting() hands out pointers into them.  They
// stay listed (under load_mutex), so that they are kept, not lost: a state a
// reload replaced is then no leak to LeakSanitizer.  The list itself is never
// destroyed either (a static vector's destructor at exit would drop them).
std::vector<const State *> *const published = new std::vector<const State *>;

const State *publish(const SettingsInputs &in) {
    auto *state = new State{load_settings(in), in.getenv};
    published->push_back(state);
    current.store(state, std::memory_order_release);
    // After publishing: LOG_ERROR reads CLDMABUF_LOG through setting().
    for (const std::string &line : state->loaded.refusals) LOG_ERROR("%s", line.c_str());
    return state;
}

const State *state() {
    if (const State *s = current.load(std::memory_order_acquire)) return s;
    std::lock_guard lock(load_mutex);
    if (const State *s = current.load(std::memory_order_acquire)) return s;
    return publish(process_settings_inputs());
}

}  // namespace

const LoadedSetting *LoadedSettings::find(std::string_view env_name) const {
    for (const LoadedSetting &l : values)
        if (env_name == l.spec->env) return &l;
    return nullptr;
}

std::string settings_file_path(const SettingsInputs &in, std::vector<std::string> *refusals) {
    if (const char *forced = in.getenv("CLDMABUF_SETTINGS_FILE"); forced && *forced) return forced;
    // XDG base directories: a relative XDG_CONFIG_HOME is invalid and ignored.
    std::string user;
    if (const char *xdg = in.getenv("XDG_CONFIG_HOME"); xdg && *xdg == '/')
        user = std::string(xdg) + "/cldmabuf/settings.txt";
    else if (const char *home = in.getenv("HOME"); home && *home)
        user = std::string(home) + "/.config/cldmabuf/settings.txt";
    for (const std::string &candidate : {user, in.system_file}) {
        if (candidate.empty()) continue;
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0) return candidate;
        if (errno != ENOENT && errno != ENOTDIR) {
            refusals->push_back("settings file " + candidate + ": " + std::strerror(errno) + "; no settings file used");
            return {};
        }
    }
    return {};
}

LoadedSettings load_settings(const SettingsInputs &in) {
    LoadedSettings out;
    std::vector<const SettingSpec *> refused_env;
    for (const SettingSpec &spec : setting_table()) {
        const char *v = in.getenv(spec.env);
        if (!v || !*v) continue;  // empty is unset, as every reader of the variables has always taken it
        if (spec.kind == SettingKind::debug) {
            // Not all or nothing: an unknown word is named once and dropped,
            // the known ones apply.
            const DebugWords words = parse_debug_words(v);
            if (!words.unknown.empty()) out.refusals.push_back(debug_refusal(words, "environment"));
            if (!words.known.empty()) out.values.push_back({&spec, words.known, "environment"});
            out.debug = words.mask;
            continue;
        }
        std::string normalised;
        if (valid_value(spec, v, &normalised))
            out.values.push_back({&spec, normalised, "environment"});
        else {
            out.refusals.push_back(refusal(spec, spec.env, v, "environment"));
            refused_env.push_back(&spec);
        }
    }
    const std::string path = settings_file_path(in, &out.refusals);
    if (path.empty()) return out;
    std::string text, why;
    const int r = read_settings_file(path, &text, &why);
    if (r != 0) {
        const bool forced = [&] {
            const char *f = in.getenv("CLDMABUF_SETTINGS_FILE");
            return f && *f;
        }();
        out.refusals.push_back(std::string(forced ? "setting CLDMABUF_SETTINGS_FILE=" : "settings file ") + path +
                               (forced ? " (environment)" : "") + ": " + (r == ENOENT ? "no such file" : why) +
                               "; no settings file used");
        return out;
    }
    out.file = path;
    parse_file(path, text, refused_env, &out);
    return out;
}

SettingsInputs process_settings_inputs() {
    SettingsInputs in;
    in.getenv = [](const char *name) -> const char * {
        // The variables that choose a file to read: a setuid program must not
        // read a file its caller names.
        if (!std::strcmp(name, "CLDMABUF_SETTINGS_FILE") || !std::strcmp(name, "XDG_CONFIG_HOME") ||
            !std::strcmp(name, "HOME"))
            return ::secure_getenv(name);
        return std::getenv(name);
    };
    return in;
}

const char *setting(const char *env_name) {
    if (!find_setting(env_name)) return std::getenv(env_name);
    const LoadedSetting *l = state()->loaded.find(env_name);
    return l ? l->value.c_str() : nullptr;
}

DebugWords parse_debug_words(std::string_view text) {
    DebugWords out;
    for (size_t start = 0; start < text.size();) {
        const size_t end = std::min(text.find_first_of(", \t", start), text.size());
        const std::string_view word = text.substr(start, end - start);
        start = end + 1;
        if (word.empty()) continue;
        const DebugWordSpec *spec = nullptr;
        for (const DebugWordSpec &w : debug_word_table())
            if (word == w.word) spec = &w;
        if (!spec) {
            if (std::find(out.unknown.begin(), out.unknown.end(), word) == out.unknown.end())
                out.unknown.emplace_back(word);
            continue;
        }
        const unsigned bit = static_cast<unsigned>(spec->bit);
        if (out.mask & bit) continue;  // named twice: listed once
        out.mask |= bit;
        out.known += (out.known.empty() ? "" : ",") + std::string(word);
    }
    return out;
}

std::string debug_refusal(const DebugWords &words, const std::string &source) {
    std::string unknown;
    for (const std::string &w : words.unknown) unknown += (unknown.empty() ? "" : ", ") + w;
    // Short, as a malformed file line is quoted: the known words at the end
    // must survive log_line's buffer.
    if (unknown.size() > 120) unknown = unknown.substr(0, 117) + "...";
    return "setting CLDMABUF_DEBUG (" + source + "): unknown word" + (words.unknown.size() > 1 ? "s " : " ") +
           unknown + " ignored" + (words.known.empty() ? "" : "; " + words.known + " applies") +
           " (known words: " + debug_words_known() + "; tests/README.md)";
}

bool debug_on(DebugWord word) {
    const State *s = state();
    const unsigned bit = static_cast<unsigned>(word);
    for (const DebugWordSpec &w : debug_word_table()) {
        if (w.bit != word || !w.every_call) continue;
        // Checked (and an unknown word logged) at load; here only re-read.
        const char *v = s->getenv("CLDMABUF_DEBUG");
        return v && (parse_debug_words(v).mask & bit) != 0;
    }
    return (s->loaded.debug & bit) != 0;
}

void validate_settings() { (void)state(); }

void reload_settings(const SettingsInputs &in) {
    std::lock_guard lock(load_mutex);
    publish(in);
}

// The log reads its level through this (layer/base/log.hpp): installed when
// the layer (or a test binary) is loaded, before any call can log.
namespace {
[[maybe_unused]] const bool log_reads_settings =
        (set_log_level_source([]() -> const char * { return setting("CLDMABUF_LOG"); }), true);
}  // namespace

}  // namespace cldmabuf
