#include "captured_log.hpp"

#include <catch2/catch_test_macros.hpp>

#include <unistd.h>

#include <cstdio>

namespace cldmabuf::test {

std::vector<std::string> captured_log(const std::function<void()> &run) {
    std::fflush(stderr);
    FILE *tmp = std::tmpfile();
    REQUIRE(tmp);
    const int saved = dup(2);
    dup2(fileno(tmp), 2);
    run();
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::rewind(tmp);
    std::vector<std::string> lines;
    char line[2048];
    while (std::fgets(line, sizeof line, tmp)) {
        std::string s(line);
        if (!s.empty() && s.back() == '\n') s.pop_back();
        if (s.rfind("cldmabuf: ", 0) == 0) lines.push_back(s);
    }
    std::fclose(tmp);
    return lines;
}

}  // namespace cldmabuf::test
