// Every query the ICD answers without the layer is answered at least as
// fully with it: testicd-dump runs twice, without and with OPENCL_LAYERS.
#include <catch2/catch_test_macros.hpp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace {

struct Answer {
    std::string kind;
    std::set<std::string> items;  // lists: their members; others: the one value
};

std::map<std::string, Answer> run_dump(bool with_layer) {
    const char *tool = std::getenv("TESTICD_DUMP");
    REQUIRE(tool);
    REQUIRE(std::getenv("OPENCL_LAYERS"));
    const std::string command = std::string(with_layer ? "" : "env -u OPENCL_LAYERS ") + tool;
    FILE *out = popen(command.c_str(), "r");
    REQUIRE(out);
    std::map<std::string, Answer> answers;
    char line[65536];
    while (std::fgets(line, sizeof line, out)) {
        std::istringstream in(line);
        std::string scope, name, kind;
        in >> scope >> name >> kind;
        Answer &a = answers[scope + " " + name];
        a.kind = kind;
        for (std::string item; in >> item;) a.items.insert(item);
    }
    REQUIRE(pclose(out) == 0);
    return answers;
}

}  // namespace

TEST_CASE("every query the ICD answers is answered at least as fully with the layer", "[superset]") {
    const auto without = run_dump(false);
    const auto with = run_dump(true);
    REQUIRE(without.size() > 20);
    for (const auto &[name, bare] : without) {
        INFO(name << " (" << bare.kind << ")");
        auto it = with.find(name);
        REQUIRE(it != with.end());
        const Answer &layered = it->second;
        CHECK(layered.kind == bare.kind);
        if (bare.kind == "raw") {
            CHECK(layered.items == bare.items);
        } else {
            for (const auto &item : bare.items) {
                INFO("missing with the layer: " << item);
                CHECK(layered.items.count(item) == 1);
            }
        }
    }
}
