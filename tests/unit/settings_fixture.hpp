// Helpers for the settings tests: a private environment, a scratch folder
// for settings files, and the layer's log lines captured from stderr.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "layer/base/log.hpp"
#include "layer/base/settings.hpp"

namespace unit {

// The inputs read only `env`, and the system file lives in the scratch folder,
// so the machine's own variables and /etc never leak into a test.
struct SettingsScratch {
    std::map<std::string, std::string> env;
    std::filesystem::path dir;

    SettingsScratch() {
        char tmpl[] = "/tmp/cldmabuf-settings-XXXXXX";
        dir = ::mkdtemp(tmpl);
    }
    ~SettingsScratch() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
        // Later tests in this process see the process's settings again, without files.
        cldmabuf::SettingsInputs plain;
        plain.getenv = [](const char *name) -> const char * {
            const std::string n(name);
            return n == "CLDMABUF_SETTINGS_FILE" || n == "XDG_CONFIG_HOME" || n == "HOME" ? nullptr
                                                                                           : std::getenv(name);
        };
        plain.system_file = "/nonexistent/cldmabuf/settings.txt";
        cldmabuf::set_log_level(cldmabuf::LogLevel::none);
        cldmabuf::reload_settings(plain);
    }

    std::string write(const std::string &relative, const std::string &text) const {
        const std::filesystem::path p = dir / relative;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << text;
        return p.string();
    }

    cldmabuf::SettingsInputs inputs() const {
        cldmabuf::SettingsInputs in;
        in.getenv = [this](const char *name) -> const char * {
            auto it = env.find(name);
            return it == env.end() ? nullptr : it->second.c_str();
        };
        in.system_file = (dir / "etc/cldmabuf/settings.txt").string();
        return in;
    }
};

// Runs `fn` with stderr sent to a file; returns the lines written.
inline std::vector<std::string> captured_stderr(const std::function<void()> &fn) {
    std::fflush(stderr);
    const int saved = ::dup(2);
    std::FILE *tmp = std::tmpfile();
    ::dup2(::fileno(tmp), 2);
    fn();
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    std::rewind(tmp);
    std::vector<std::string> lines;
    char buf[2048];
    while (std::fgets(buf, sizeof buf, tmp)) {
        std::string l(buf);
        if (!l.empty() && l.back() == '\n') l.pop_back();
        lines.push_back(l);
    }
    std::fclose(tmp);
    return lines;
}

// The log lines reload_settings(in) writes at the default level.
inline std::vector<std::string> reload_and_capture(const cldmabuf::SettingsInputs &in) {
    cldmabuf::set_log_level(cldmabuf::LogLevel::error);
    auto lines = captured_stderr([&] { cldmabuf::reload_settings(in); });
    cldmabuf::set_log_level(cldmabuf::LogLevel::none);
    return lines;
}

}  // namespace unit
