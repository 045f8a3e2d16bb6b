// CLDMABUF_LOG=error|warn|info|debug: one line per event on stderr.
#pragma once

namespace cldmabuf {

enum class LogLevel : int { none = 0, error = 1, warn = 2, info = 3, debug = 4 };

// Parsed once from the settings (layer/base/settings.hpp; default: error).
LogLevel log_level();
// Tests override the level (and re-read the environment with reset).
void set_log_level(LogLevel level);

void log_line(LogLevel level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace cldmabuf

#define CLDMABUF_LOG(level, ...)                                               \
    do {                                                                       \
        if (static_cast<int>(level) <= static_cast<int>(::cldmabuf::log_level())) \
            ::cldmabuf::log_line(level, __VA_ARGS__);                          \
    } while (0)
#define LOG_ERROR(...) CLDMABUF_LOG(::cldmabuf::LogLevel::error, __VA_ARGS__)
#define LOG_WARN(...) CLDMABUF_LOG(::cldmabuf::LogLevel::warn, __VA_ARGS__)
#define LOG_INFO(...) CLDMABUF_LOG(::cldmabuf::LogLevel::info, __VA_ARGS__)
#define LOG_DEBUG(...) CLDMABUF_LOG(::cldmabuf::LogLevel::debug, __VA_ARGS__)
