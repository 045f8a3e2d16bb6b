#include "layer/base/log.hpp"

#include "layer/base/settings.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cldmabuf {
namespace {

LogLevel parse_level(const char *text) {
    if (!text || !*text) return LogLevel::error;
    if (!std::strcmp(text, "none") || !std::strcmp(text, "off")) return LogLevel::none;
    if (!std::strcmp(text, "warn") || !std::strcmp(text, "warning")) return LogLevel::warn;
    if (!std::strcmp(text, "info")) return LogLevel::info;
    if (!std::strcmp(text, "debug")) return LogLevel::debug;
    return LogLevel::error;
}

std::atomic<int> level{-1};

const char *level_name(LogLevel l) {
    switch (l) {
    case LogLevel::error: return "error";
    case LogLevel::warn: return "warn";
    case LogLevel::info: return "info";
    case LogLevel::debug: return "debug";
    default: return "";
    }
}

}  // namespace

LogLevel log_level() {
    int l = level.load(std::memory_order_relaxed);
    if (l < 0) {
        l = static_cast<int>(parse_level(setting("CLDMABUF_LOG")));
        level.store(l, std::memory_order_relaxed);
    }
    return static_cast<LogLevel>(l);
}

void set_log_level(LogLevel l) { level.store(static_cast<int>(l), std::memory_order_relaxed); }

void log_line(LogLevel l, const char *fmt, ...) {
    // One write per line so lines from several threads never interleave.
    char buf[1024];
    int n = std::snprintf(buf, sizeof buf, "cldmabuf: %s: ", level_name(l));
    va_list ap;
    va_start(ap, fmt);
    int m = std::vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
    va_end(ap);
    size_t len = n + (m < 0 ? 0 : (size_t)m < sizeof buf - n - 1 ? m : sizeof buf - n - 2);
    buf[len++] = '\n';
    std::fwrite(buf, 1, len, stderr);
}

}  // namespace cldmabuf
