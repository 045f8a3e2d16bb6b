// Settings: environment > settings file > default, the file lookup, and every
// kind of refused value with its one log line (layer/base/settings.hpp).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "settings_fixture.hpp"

using namespace cldmabuf;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

namespace {

std::string value_of(const LoadedSettings &s, const char *env) {
    const LoadedSetting *l = s.find(env);
    return l ? l->value : std::string("<default>");
}

std::string source_of(const LoadedSettings &s, const char *env) {
    const LoadedSetting *l = s.find(env);
    return l ? l->source : std::string("<default>");
}

// "`auto`" -> "auto": the log line names the default without markdown.
std::string plain_default(const std::string &env) {
    std::string d = find_setting(env)->default_text;
    std::erase(d, '`');
    return d;
}

}  // namespace

TEST_CASE("settings: the environment wins over the file, the file over the default") {
    unit::SettingsScratch scratch;
    const std::string file = scratch.write("my.txt",
                                           "cldmabuf.fence_timeout_ms = 2000\n"
                                           "cldmabuf.import = copy\n");
    scratch.env["CLDMABUF_SETTINGS_FILE"] = file;
    scratch.env["CLDMABUF_FENCE_TIMEOUT_MS"] = "3000";

    const LoadedSettings s = load_settings(scratch.inputs());
    CHECK(s.refusals.empty());
    CHECK(s.file == file);
    CHECK(value_of(s, "CLDMABUF_FENCE_TIMEOUT_MS") == "3000");
    CHECK(source_of(s, "CLDMABUF_FENCE_TIMEOUT_MS") == "environment");
    CHECK(value_of(s, "CLDMABUF_IMPORT") == "copy");
    CHECK(source_of(s, "CLDMABUF_IMPORT") == file + ":2");
    CHECK(value_of(s, "CLDMABUF_BLT") == "<default>");

    // The same through the layer's drop-in for getenv.
    reload_settings(scratch.inputs());
    CHECK(std::string(setting("CLDMABUF_FENCE_TIMEOUT_MS")) == "3000");
    CHECK(std::string(setting("CLDMABUF_IMPORT")) == "copy");
    CHECK(setting("CLDMABUF_BLT") == nullptr);
}

TEST_CASE("settings: an empty variable is unset, so the file's value applies") {
    unit::SettingsScratch scratch;
    scratch.env["CLDMABUF_SETTINGS_FILE"] = scratch.write("s.txt", "cldmabuf.staging = pinned\n");
    scratch.env["CLDMABUF_STAGING"] = "";
    const LoadedSettings s = load_settings(scratch.inputs());
    CHECK(value_of(s, "CLDMABUF_STAGING") == "pinned");
    CHECK(s.refusals.empty());
}

TEST_CASE("settings: the file lookup, CLDMABUF_SETTINGS_FILE then per-user then system") {
    unit::SettingsScratch scratch;
    const std::string forced = scratch.write("forced.txt", "");
    const std::string xdg = scratch.write("xdg/cldmabuf/settings.txt", "");
    const std::string home = scratch.write("home/.config/cldmabuf/settings.txt", "");
    const std::string system = scratch.write("etc/cldmabuf/settings.txt", "");
    std::vector<std::string> refusals;

    scratch.env = {{"CLDMABUF_SETTINGS_FILE", forced},
                   {"XDG_CONFIG_HOME", (scratch.dir / "xdg").string()},
                   {"HOME", (scratch.dir / "home").string()}};
    CHECK(settings_file_path(scratch.inputs(), &refusals) == forced);

    scratch.env.erase("CLDMABUF_SETTINGS_FILE");
    CHECK(settings_file_path(scratch.inputs(), &refusals) == xdg);

    SECTION("XDG_CONFIG_HOME replaces ~/.config: without its file, the system file") {
        std::filesystem::remove(xdg);
        CHECK(settings_file_path(scratch.inputs(), &refusals) == system);
    }
    SECTION("without XDG_CONFIG_HOME, ~/.config") {
        scratch.env.erase("XDG_CONFIG_HOME");
        CHECK(settings_file_path(scratch.inputs(), &refusals) == home);
    }
    SECTION("a relative XDG_CONFIG_HOME is ignored (XDG base directories)") {
        scratch.env["XDG_CONFIG_HOME"] = "relative/xdg";
        CHECK(settings_file_path(scratch.inputs(), &refusals) == home);
    }
    SECTION("no per-user file: the system file") {
        scratch.env.erase("XDG_CONFIG_HOME");
        std::filesystem::remove(home);
        CHECK(settings_file_path(scratch.inputs(), &refusals) == system);
    }
    SECTION("no file anywhere: none, and nothing to say") {
        scratch.env.clear();
        std::filesystem::remove(system);
        CHECK(settings_file_path(scratch.inputs(), &refusals).empty());
    }
    CHECK(refusals.empty());
}

TEST_CASE("settings: a missing CLDMABUF_SETTINGS_FILE is refused, and no other file stands in") {
    unit::SettingsScratch scratch;
    scratch.write("etc/cldmabuf/settings.txt", "cldmabuf.blt = off\n");
    scratch.env["CLDMABUF_SETTINGS_FILE"] = (scratch.dir / "missing.txt").string();
    const auto lines = unit::reload_and_capture(scratch.inputs());
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], StartsWith("cldmabuf: error: setting CLDMABUF_SETTINGS_FILE="));
    CHECK_THAT(lines[0], ContainsSubstring("(environment): no such file"));
    CHECK(setting("CLDMABUF_BLT") == nullptr);
}

TEST_CASE("settings: a folder or a FIFO as the settings file is refused without waiting") {
    unit::SettingsScratch scratch;
    SECTION("folder") { scratch.env["CLDMABUF_SETTINGS_FILE"] = scratch.dir.string(); }
    SECTION("FIFO: a blocking open would wait for a writer forever") {
        const std::string fifo = (scratch.dir / "fifo").string();
        REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        scratch.env["CLDMABUF_SETTINGS_FILE"] = fifo;
    }
    const auto lines = unit::reload_and_capture(scratch.inputs());
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], ContainsSubstring("CLDMABUF_SETTINGS_FILE"));
    CHECK_THAT(lines[0], ContainsSubstring("not a regular file"));
}

TEST_CASE("settings: a refused variable gets one log line naming it, its source and the accepted values") {
    unit::SettingsScratch scratch;
    std::string env, value, accepted, in_file = "1";
    SECTION("unknown word") {
        env = "CLDMABUF_IMPORT", value = "fast", accepted = "auto, zero-copy, zerocopy, copy", in_file = "copy";
    }
    SECTION("number above the range") {
        env = "CLDMABUF_FENCE_TIMEOUT_MS", value = "3600000", accepted = "an integer 0..3599999";
    }
    SECTION("negative number") { env = "CLDMABUF_MAP_CACHE_MB", value = "-1", accepted = "an integer 0..1048576"; }
    SECTION("number with a unit") {
        env = "CLDMABUF_FENCE_TIMEOUT_MS", value = "100ms", accepted = "an integer 0..3599999";
    }
    SECTION("number too large for any integer") {
        env = "CLDMABUF_MAP_CACHE_MB", value = "99999999999999999999999", accepted = "an integer 0..1048576";
    }
    SECTION("flag") { env = "CLDMABUF_STATS", value = "maybe", accepted = "1, 0, on, off, true, false, yes, no"; }
    SECTION("the blitter's semaphore chain (auto is the default)") {
        env = "CLDMABUF_BLT_SEMAPHORE_FENCES", value = "always", accepted = "auto, on, off", in_file = "on";
    }
    SECTION("the log level itself") {
        env = "CLDMABUF_LOG", value = "loud", accepted = "none, off, error, warn, warning, info, debug";
        in_file = "debug";
    }
    // A valid file value is not used either: the refused setting takes its default.
    scratch.env["CLDMABUF_SETTINGS_FILE"] =
        scratch.write("s.txt", "cldmabuf." + setting_file_key(*find_setting(env)) + " = " + in_file + "\n");
    scratch.env[env] = value;

    const auto lines = unit::reload_and_capture(scratch.inputs());
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == "cldmabuf: error: setting " + env + "=" + value + " (environment) refused: accepted " +
                          accepted + "; using the default (" + plain_default(env) + ")");
    CHECK(setting(env.c_str()) == nullptr);
}

TEST_CASE("settings: each refused file line gets one log line with file:line, the others apply") {
    unit::SettingsScratch scratch;
    const std::string file = scratch.write("s.txt",
                                           "cldmabuf.log = loud\n"                // 1: unknown word
                                           "cldmabuf.fence_timeout = 5\n"         // 2: unknown key
                                           "cldmabuf.blt_exporters any\n"         // 3: no '='
                                           "khronos_validation.debug_action = x\n"  // 4: another layer's line
                                           "cldmabuf.settings_file = /x\n"        // 5: environment only
                                           "cldmabuf.fence_timeout_ms = 1e3\n"    // 6: not an integer
                                           "cldmabuf.blt_node =\n"                // 7: empty value
                                           "cldmabuf.blt = off\n"                 // 8: valid
                                           + std::string(2000, 'x') + "\n");        // 9: malformed, long
    scratch.env["CLDMABUF_SETTINGS_FILE"] = file;
    const auto lines = unit::reload_and_capture(scratch.inputs());
    REQUIRE(lines.size() == 8);
    CHECK(lines[0] == "cldmabuf: error: setting cldmabuf.log=loud (" + file +
                          ":1) refused: accepted none, off, error, warn, warning, info, debug; using the default "
                          "(error)");
    CHECK_THAT(lines[1], StartsWith("cldmabuf: error: settings file " + file + ":2: unknown setting "
                                    "cldmabuf.fence_timeout (accepted keys: log, stats, import,"));
    CHECK_THAT(lines[1], ContainsSubstring("fence_timeout_ms"));
    CHECK_THAT(lines[2], StartsWith("cldmabuf: error: settings file " + file + ":3: malformed line"));
    CHECK_THAT(lines[2], ContainsSubstring("expected cldmabuf.<key> = <value>"));
    CHECK_THAT(lines[3], StartsWith("cldmabuf: error: settings file " + file + ":4: malformed line"));
    CHECK_THAT(lines[4], StartsWith("cldmabuf: error: settings file " + file + ":5: unknown setting "
                                    "cldmabuf.settings_file"));
    CHECK_THAT(lines[5], ContainsSubstring("cldmabuf.fence_timeout_ms=1e3 (" + file + ":6)"));
    CHECK_THAT(lines[5], ContainsSubstring("accepted an integer 0..3599999; using the default (1000)"));
    CHECK_THAT(lines[6], ContainsSubstring("cldmabuf.blt_node= (" + file + ":7) refused: accepted a non-empty path"));
    // A long line is quoted short, so the advice at the end of the log line survives.
    CHECK_THAT(lines[7], ContainsSubstring(":9: malformed line \"" + std::string(77, 'x') + "...\" (expected"));
    CHECK(setting("CLDMABUF_LOG") == nullptr);
    CHECK(setting("CLDMABUF_FENCE_TIMEOUT_MS") == nullptr);
    CHECK(std::string(setting("CLDMABUF_BLT")) == "off");
}

TEST_CASE("settings: comments, blank lines, spaces and CRLF line ends") {
    unit::SettingsScratch scratch;
    const std::string file = scratch.write("s.txt",
                                           "# cldmabuf settings\r\n"
                                           "\r\n"
                                           "   # indented comment = not a setting\r\n"
                                           "\t\r\n"
                                           "cldmabuf.blt = off\r\n"
                                           "  cldmabuf.import=zero-copy  \r\n"
                                           "cldmabuf.egl_lib = /opt/egl/lib EGL.so");  // no final newline
    scratch.env["CLDMABUF_SETTINGS_FILE"] = file;
    const LoadedSettings s = load_settings(scratch.inputs());
    CHECK(s.refusals.empty());
    CHECK(value_of(s, "CLDMABUF_BLT") == "off");
    CHECK(source_of(s, "CLDMABUF_BLT") == file + ":5");
    CHECK(value_of(s, "CLDMABUF_IMPORT") == "zero-copy");
    CHECK(source_of(s, "CLDMABUF_IMPORT") == file + ":6");
    CHECK(value_of(s, "CLDMABUF_EGL_LIB") == "/opt/egl/lib EGL.so");
    CHECK(s.values.size() == 4);  // and CLDMABUF_SETTINGS_FILE from the environment
}

TEST_CASE("settings: the last line of a key wins; a refused last line leaves the default") {
    unit::SettingsScratch scratch;
    scratch.env["CLDMABUF_SETTINGS_FILE"] = scratch.write("s.txt",
                                                          "cldmabuf.staging = pinned\n"
                                                          "cldmabuf.staging = off\n"
                                                          "cldmabuf.blt_exporters = any\n"
                                                          "cldmabuf.blt_exporters = some\n");
    const LoadedSettings s = load_settings(scratch.inputs());
    CHECK(value_of(s, "CLDMABUF_STAGING") == "off");
    CHECK(value_of(s, "CLDMABUF_BLT_EXPORTERS") == "<default>");
    CHECK(s.refusals.size() == 1);
}

TEST_CASE("settings: flags answer 1 or 0 whichever spelling, so every reader reads the same") {
    unit::SettingsScratch scratch;
    SECTION("environment") {
        scratch.env["CLDMABUF_STATS"] = "yes";
        reload_settings(scratch.inputs());
        CHECK(std::string(setting("CLDMABUF_STATS")) == "1");
    }
    SECTION("settings file") {
        scratch.env["CLDMABUF_SETTINGS_FILE"] = scratch.write("s.txt", "cldmabuf.stats = off\n");
        reload_settings(scratch.inputs());
        CHECK(std::string(setting("CLDMABUF_STATS")) == "0");
    }
}

TEST_CASE("settings: refusals are logged once, at load, however often the layer asks") {
    unit::SettingsScratch scratch;
    scratch.env["CLDMABUF_BLT"] = "maybe";
    unit::reload_and_capture(scratch.inputs());
    set_log_level(LogLevel::error);
    const auto lines = unit::captured_stderr([] {
        validate_settings();
        for (int i = 0; i < 3; ++i) CHECK(setting("CLDMABUF_BLT") == nullptr);
        validate_settings();
    });
    set_log_level(LogLevel::none);
    CHECK(lines.empty());
}

TEST_CASE("settings: a name not in the table is read from the environment as before") {
    ::setenv("CLDMABUF_UNIT_NOT_A_SETTING", "v", 1);
    CHECK(std::string(setting("CLDMABUF_UNIT_NOT_A_SETTING")) == "v");
    ::unsetenv("CLDMABUF_UNIT_NOT_A_SETTING");
    CHECK(setting("CLDMABUF_UNIT_NOT_A_SETTING") == nullptr);
}

TEST_CASE("settings: the log level comes from the settings file (the source settings.cpp gives log.cpp)") {
    unit::SettingsScratch scratch;
    scratch.env["CLDMABUF_SETTINGS_FILE"] = scratch.write("s.txt", "cldmabuf.log = debug\n");
    reload_settings(scratch.inputs());
    set_log_level(static_cast<LogLevel>(-1));  // forget the cached level: the next call reads it again
    CHECK(log_level() == LogLevel::debug);
    set_log_level(LogLevel::none);
}
