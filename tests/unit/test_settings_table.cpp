// The one table of settings against what documents it and what reads it:
// docs/user-guide.md's table is settings_markdown() verbatim, and every
// CLDMABUF_ variable the layer reads has a row (and every row a reader).
#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "layer/base/settings.hpp"

#ifndef CLDMABUF_SOURCE_ROOT
#error "tests/unit/meson.build passes the source root"
#endif

using namespace cldmabuf;

namespace {

const std::filesystem::path root = CLDMABUF_SOURCE_ROOT;

std::string read_text(const std::filesystem::path &p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The table lines ("|...") of the user guide's "## Settings" section.
std::string guide_settings_table() {
    std::istringstream guide(read_text(root / "docs/user-guide.md"));
    std::string line, table;
    bool in_section = false;
    while (std::getline(guide, line)) {
        if (line.rfind("## ", 0) == 0) in_section = line == "## Settings";
        else if (in_section && line.rfind("|", 0) == 0) table += line + "\n";
    }
    return table;
}

}  // namespace

TEST_CASE("settings table: docs/user-guide.md lists exactly the table, as settings_markdown() writes it") {
    const std::string expected = settings_markdown();
    // On a difference, the expected text is printed: paste it under "## Settings".
    INFO("docs/user-guide.md, \"## Settings\", should hold:\n" << expected);
    CHECK(guide_settings_table() == expected);
}

TEST_CASE("settings table: the user guide's table holds the user's settings only, not the tests' CLDMABUF_DEBUG") {
    const std::string guide = guide_settings_table();
    CHECK(guide.find("CLDMABUF_DEBUG") == std::string::npos);
    for (const SettingSpec &s : setting_table()) {
        CAPTURE(s.env);
        const bool listed = guide.find("| `" + std::string(s.env) + "` |") != std::string::npos;
        CHECK(listed == (s.kind != SettingKind::debug));
    }
}

TEST_CASE("settings table: every CLDMABUF_ variable read in layer/ has a row, every row is read") {
    // getenv("CLDMABUF_X") now; setting("CLDMABUF_X") once the call sites move to the table.
    const std::regex read_call(R"re((getenv|setting)\("(CLDMABUF_[A-Z0-9_]+)"\))re");
    std::set<std::string> read;
    for (const auto &entry : std::filesystem::recursive_directory_iterator(root / "layer")) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_regular_file() || name.rfind("settings", 0) == 0) continue;
        if (entry.path().extension() != ".cpp" && entry.path().extension() != ".hpp") continue;
        const std::string text = read_text(entry.path());
        for (std::sregex_iterator m(text.begin(), text.end(), read_call), end; m != end; ++m)
            read.insert((*m)[2].str());
    }
    std::set<std::string> rows;
    for (const SettingSpec &s : setting_table())
        if (!s.env_only) rows.insert(s.env);
    CHECK(read == rows);
    REQUIRE(find_setting("CLDMABUF_SETTINGS_FILE"));
    CHECK(find_setting("CLDMABUF_SETTINGS_FILE")->env_only);
}

TEST_CASE("settings table: every default is a value the row accepts, or says in words what happens") {
    for (const SettingSpec &s : setting_table()) {
        CAPTURE(s.env);
        std::string d = s.default_text;
        if (d.size() < 2 || d.front() != '`' || d.back() != '`' || d.find('`', 1) != d.size() - 1)
            continue;  // "per ICD", "scan `/dev/dri/renderD*`": no single value
        d = d.substr(1, d.size() - 2);
        SettingsInputs in;
        in.getenv = [&](const char *name) -> const char * { return std::string(name) == s.env ? d.c_str() : nullptr; };
        in.system_file = "/nonexistent/cldmabuf/settings.txt";
        CHECK(load_settings(in).refusals.empty());
    }
}
