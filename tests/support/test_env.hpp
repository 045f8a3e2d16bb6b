// The test lanes' environment switches (CLDMABUF_IMPORT=copy, CLDMABUF_BLT=off,
// CLDMABUF_TEST_DMABUF=sim, ...): one spelling of "is it set to this value",
// and the words of CLDMABUF_DEBUG (tests/README.md) as the layer reads them.
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace cldmabuf::test {

inline bool env_is(const char *name, const char *value) {
    const char *v = std::getenv(name);
    return v && std::strcmp(v, value) == 0;
}

// Whether CLDMABUF_DEBUG names `word`: split on commas, spaces and tabs, as
// layer/base/settings.cpp's parse_debug_words splits it.
inline bool debug_word_on(const char *word) {
    const char *v = std::getenv("CLDMABUF_DEBUG");
    if (!v || !*word) return false;  // an empty word is no word
    const std::string_view list(v);
    for (size_t start = 0; start < list.size();) {
        size_t end = list.find_first_of(", \t", start);
        if (end == std::string_view::npos) end = list.size();
        if (list.substr(start, end - start) == word) return true;
        start = end + 1;
    }
    return false;
}

// Adds `word` to CLDMABUF_DEBUG for the scope's life, then puts the variable
// back as it was.  For the words the layer reads on every call
// (egl-force-copy); the others it reads once, at load.  `on` false: nothing.
class DebugWordScope {
public:
    explicit DebugWordScope(const char *word, bool on = true) : on_(on) {
        if (!on_) return;
        const char *old = std::getenv("CLDMABUF_DEBUG");
        had_ = old != nullptr;
        if (had_) old_ = old;
        const std::string now = had_ && *old ? old_ + "," + word : std::string(word);
        ::setenv("CLDMABUF_DEBUG", now.c_str(), 1);
    }
    ~DebugWordScope() {
        if (!on_) return;
        if (had_) ::setenv("CLDMABUF_DEBUG", old_.c_str(), 1);
        else ::unsetenv("CLDMABUF_DEBUG");
    }
    DebugWordScope(const DebugWordScope &) = delete;
    DebugWordScope &operator=(const DebugWordScope &) = delete;

private:
    bool on_;
    bool had_ = false;
    std::string old_;
};

}  // namespace cldmabuf::test
