// The explorer's driver: for each scenario, a depth-first search over the
// schedules (a fresh child process per schedule, which reports each choice
// as it makes it), up to a number of schedules, then seeded random samples,
// all within a time budget.  README.md here lists the knobs.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "explorer.hpp"

using namespace explore;

namespace {

struct Outcome {
    std::vector<uint32_t> choices, counts;
    std::vector<std::string> labels;
    std::vector<std::string> failures;
    std::vector<std::string> taken;  // the scenario's paths this schedule took
    bool clean_end = false;
};

long env_number(const char *name, long fallback) {
    const char *v = std::getenv(name);
    return v && *v ? std::strtol(v, nullptr, 10) : fallback;
}

void child(const Scenario &s, const std::vector<uint32_t> &prefix, bool sample, uint64_t seed, int fd) {
    std::string mode = "manual";
    if (!s.icd_mode.empty()) mode += "," + s.icd_mode;
    setenv("CLDMABUF_TESTICD", mode.c_str(), 1);
    setenv("CLDMABUF_DEBUG", "worker-manual", 1);
    for (const auto &[k, v] : s.env) setenv(k.c_str(), v.c_str(), 1);
    Chooser c;
    c.prefix = prefix;
    c.sample = sample;
    c.seed = seed;
    c.report_fd = fd;
    run_schedule(s, c);
    _exit(0);
}

Outcome run_child(const Scenario &s, const std::vector<uint32_t> &prefix, bool sample, uint64_t seed) {
    int p[2];
    if (pipe(p) != 0) std::abort();
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        child(s, prefix, sample, seed, p[1]);
    }
    close(p[1]);
    std::string text;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    bool killed = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            kill(pid, SIGKILL);
            killed = true;
            break;
        }
        pollfd pf{p[0], POLLIN, 0};
        if (poll(&pf, 1, static_cast<int>(left.count())) <= 0) continue;
        char buf[4096];
        const ssize_t n = read(p[0], buf, sizeof buf);
        if (n <= 0) break;
        text.append(buf, static_cast<size_t>(n));
    }
    close(p[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    Outcome o;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("C ", 0) == 0) {
            std::istringstream l(line.substr(2));
            uint32_t c = 0, n = 0;
            l >> c >> n;
            std::string label;
            std::getline(l, label);
            o.choices.push_back(c);
            o.counts.push_back(n);
            o.labels.push_back(label.empty() ? label : label.substr(1));
        } else if (line.rfind("F ", 0) == 0) {
            o.failures.push_back(line.substr(2));
        } else if (line.rfind("T ", 0) == 0) {
            o.taken.push_back(line.substr(2));
        } else if (line == "E") {
            o.clean_end = true;
        }
    }
    if (killed) o.failures.push_back("the schedule did not end within 30 s (killed)");
    else if (!o.clean_end && o.failures.empty())
        o.failures.push_back(WIFSIGNALED(status) ? "the child died of signal " + std::to_string(WTERMSIG(status))
                                                 : "the child ended without a result");
    return o;
}

std::string joined(const std::vector<uint32_t> &v) {
    std::string s;
    for (uint32_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
    return s;
}

void print_schedule(const Outcome &o) {
    for (size_t i = 0; i < o.labels.size(); ++i)
        std::printf("      %3zu. [%u/%u] %s\n", i + 1, o.choices[i], o.counts[i], o.labels[i].c_str());
    for (const std::string &f : o.failures) std::printf("    failure: %s\n", f.c_str());
}

struct Tally {
    size_t dfs = 0, sampled = 0, failing = 0;
    size_t known = 0;  // schedules failing only with the scenario's known failures
    std::string first_known;
    Outcome known_outcome;
    Outcome witness;  // the known defect's witness schedule
    bool witness_fails = false;
    size_t diverged = 0;  // replays of a prefix that met other steps (the harness is not deterministic there)
    bool complete = false;
    std::map<std::string, size_t> taken;  // schedules that took each of the scenario's paths
    std::string first_failure;  // how to replay it
    Outcome first;
};

bool only_known(const Scenario &s, const Outcome &o) {
    if (s.known_failures.empty()) return false;
    for (const std::string &f : o.failures) {
        bool known = false;
        for (const std::string &k : s.known_failures) known |= f.find(k) != std::string::npos;
        if (!known) return false;
    }
    return true;
}

void note(const Scenario &s, Tally &t, const Outcome &o, const std::string &replay) {
    for (const std::string &p : o.taken) ++t.taken[p];
    if (o.failures.empty()) return;
    if (only_known(s, o)) {
        if (t.known++ == 0) {
            t.first_known = replay;
            t.known_outcome = o;
        }
        return;
    }
    if (t.failing++ == 0) {
        t.first_failure = replay;
        t.first = o;
    }
}

// A schedule as CLDMABUF_EXPLORE_REPLAY names it after the colon: the
// choices ("0,0,1") or a sample's seed ("seed=7").
void parse_schedule(const std::string &spec, std::vector<uint32_t> *prefix, bool *sample, uint64_t *seed) {
    if (spec.rfind("seed=", 0) == 0) {
        *sample = true;
        *seed = std::strtoull(spec.c_str() + 5, nullptr, 10);
        return;
    }
    std::stringstream in(spec);
    for (std::string x; std::getline(in, x, ',');)
        if (!x.empty()) prefix->push_back(static_cast<uint32_t>(std::stoul(x)));
}

Tally explore_one(const Scenario &s, size_t dfs_cap, size_t samples, uint64_t seed0, double seconds) {
    Tally t;
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    if (!s.known_failures.empty()) {
        std::vector<uint32_t> prefix;
        bool sample = false;
        uint64_t seed = 0;
        parse_schedule(s.known_witness, &prefix, &sample, &seed);
        t.witness = run_child(s, prefix, sample, seed);
        t.witness_fails = !t.witness.failures.empty() && only_known(s, t.witness);
    }
    std::vector<uint32_t> prefix;
    Outcome last;
    while (t.dfs < dfs_cap && elapsed() < seconds * 0.6) {
        const Outcome o = run_child(s, prefix, false, 0);
        ++t.dfs;
        // The prefix (but its last choice) must meet the same steps as the run it came from.
        for (size_t i = 0; i + 1 < prefix.size(); ++i)
            if (i >= o.labels.size() || i >= last.labels.size() || o.labels[i] != last.labels[i] ||
                o.counts[i] != last.counts[i]) {
                if (t.diverged++ == 0)
                    std::printf("    %s: a replayed prefix diverged at step %zu: '%s' of %u then, '%s' of %u now "
                                "(prefix %s)\n",
                                s.name.c_str(), i + 1, i < last.labels.size() ? last.labels[i].c_str() : "(none)",
                                i < last.counts.size() ? last.counts[i] : 0,
                                i < o.labels.size() ? o.labels[i].c_str() : "(none)", i < o.counts.size() ? o.counts[i] : 0,
                                joined(prefix).c_str());
                if (t.diverged == 1)
                    for (const std::string &f : o.failures) std::printf("      its failure: %s\n", f.c_str());
                break;
            }
        last = o;
        note(s, t, o, s.name + ":" + joined(o.choices));
        // Backtrack: the deepest choice with an option left.
        size_t i = o.choices.size();
        while (i > 0 && o.choices[i - 1] + 1 >= o.counts[i - 1]) --i;
        if (i == 0) {
            t.complete = true;
            break;
        }
        prefix.assign(o.choices.begin(), o.choices.begin() + static_cast<long>(i - 1));
        prefix.push_back(o.choices[i - 1] + 1);
    }
    for (size_t k = 0; !t.complete && k < samples && elapsed() < seconds; ++k) {
        const uint64_t seed = seed0 + k;
        const Outcome o = run_child(s, {}, true, seed);
        ++t.sampled;
        note(s, t, o, s.name + ":seed=" + std::to_string(seed));
    }
    return t;
}

int replay(const std::string &spec) {
    const size_t colon = spec.find(':');
    const std::string name = spec.substr(0, colon), rest = colon == std::string::npos ? "" : spec.substr(colon + 1);
    for (const Scenario &s : scenarios()) {
        if (s.name != name) continue;
        std::vector<uint32_t> prefix;
        bool sample = false;
        uint64_t seed = 0;
        parse_schedule(rest, &prefix, &sample, &seed);
        const Outcome o = run_child(s, prefix, sample, seed);
        std::printf("replay %s: %s\n", spec.c_str(), o.failures.empty() ? "passes" : "FAILS");
        print_schedule(o);
        return o.failures.empty() ? 0 : 1;
    }
    std::printf("no scenario '%s'\n", name.c_str());
    return 2;
}


// One scenario's lines for the log, and whether it counts against the run.
std::string report(const Scenario &s, const Tally &t, bool *bad) {
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%s (%s): %zu schedules (%zu depth-first%s, %zu sampled), %zu failing",
                  s.name.c_str(), s.summary.c_str(), t.dfs + t.sampled, t.dfs, t.complete ? ", every schedule" : "",
                  t.sampled, t.failing);
    out += line;
    *bad = false;
    if (t.diverged) {
        out += ", " + std::to_string(t.diverged) + " replays diverged -- NOT DETERMINISTIC";
        *bad = true;
    }
    for (const std::string &p : s.paths) {
        const size_t n = t.taken.count(p) ? t.taken.at(p) : 0;
        out += ", " + p + " in " + std::to_string(n);
        if (!n) {
            out += " -- PATH NEVER TAKEN";
            *bad = true;
        }
    }
    if (s.expect_failure) {
        out += t.failing ? " -- expected failure\n" : " -- UNEXPECTED PASS: flip its expectation\n";
        *bad = *bad || !t.failing;
    } else {
        out += t.failing ? " -- FAILED\n" : "\n";
        *bad = *bad || t.failing;
    }
    auto schedule = [&](const char *what, const std::string &replay, const Outcome &o) {
        out += std::string("    first ") + what + " schedule (replay: CLDMABUF_EXPLORE_REPLAY=" + replay + "):\n";
        for (size_t i = 0; i < o.labels.size(); ++i) {
            std::snprintf(line, sizeof line, "      %3zu. [%u/%u] %s\n", i + 1, o.choices[i], o.counts[i],
                          o.labels[i].c_str());
            out += line;
        }
        for (const std::string &f : o.failures) out += "    failure: " + f + "\n";
    };
    if (!s.known_failures.empty()) {
        std::snprintf(line, sizeof line, "    %zu schedules failed only with its known failures; its witness %s:%s ",
                      t.known, s.name.c_str(), s.known_witness.c_str());
        out += line;
        out += t.witness_fails ? "still fails with them -- known defect\n"
                               : "does not fail with them now -- the known defect is gone? drop it\n";
        *bad = *bad || !t.witness_fails;
        if (!t.witness_fails) schedule("witness", s.name + ":" + s.known_witness, t.witness);
        else if (!t.failing) schedule("known-defect", s.name + ":" + s.known_witness, t.witness);
    }
    if (t.failing) schedule("failing", t.first_failure, t.first);
    return out;
}

// A scenario explored in a process of its own (CLDMABUF_EXPLORE_JOBS at once); its
// counts and report come back in a file.
struct Job {
    const Scenario *s;
    pid_t pid = -1;
    FILE *out = nullptr;
};

}  // namespace

int main() {
    if (const char *r = std::getenv("CLDMABUF_EXPLORE_REPLAY"); r && *r) return replay(r);
    const size_t dfs_cap = static_cast<size_t>(env_number("CLDMABUF_EXPLORE_DFS", 400));
    const size_t samples = static_cast<size_t>(env_number("CLDMABUF_EXPLORE_SAMPLES", 200));
    const double budget = static_cast<double>(env_number("CLDMABUF_EXPLORE_BUDGET_S", 70));
    const size_t jobs = static_cast<size_t>(std::max(1L, env_number("CLDMABUF_EXPLORE_JOBS", 2)));
    const uint64_t seed0 = static_cast<uint64_t>(env_number("CLDMABUF_EXPLORE_SEED", 1));
    const char *only = std::getenv("CLDMABUF_EXPLORE_SCENARIOS");

    std::vector<Job> chosen;
    for (const Scenario &s : scenarios())
        if (!only || !*only || ("," + std::string(only) + ",").find("," + s.name + ",") != std::string::npos)
            chosen.push_back({&s});
    // Each scenario's share of the budget, with `jobs` running at once.
    const double share = budget * static_cast<double>(std::min(jobs, chosen.size())) /
                         static_cast<double>(std::max<size_t>(1, chosen.size()));

    const auto start = std::chrono::steady_clock::now();
    auto launch = [&](Job &j) {
        j.out = std::tmpfile();
        std::fflush(nullptr);
        j.pid = fork();
        if (j.pid == 0) {
            const Tally t = explore_one(*j.s, dfs_cap, samples, seed0, share);
            bool bad = false;
            const std::string text = report(*j.s, t, &bad);
            std::fprintf(j.out, "%zu %zu %d\n%s", t.dfs, t.sampled, bad ? 1 : 0, text.c_str());
            std::fflush(j.out);
            _exit(0);
        }
    };
    size_t exhaustive = 0, sampled = 0;
    int bad = 0;
    size_t next = 0;
    for (; next < std::min(jobs, chosen.size()); ++next) launch(chosen[next]);
    for (size_t i = 0; i < chosen.size(); ++i) {
        Job &j = chosen[i];
        int status = 0;
        waitpid(j.pid, &status, 0);
        if (next < chosen.size()) launch(chosen[next++]);
        std::rewind(j.out);
        size_t dfs = 0, smp = 0;
        int b = 1;
        if (std::fscanf(j.out, "%zu %zu %d\n", &dfs, &smp, &b) != 3) {
            std::printf("%s: the explorer's process for it ended without a report\n", j.s->name.c_str());
            ++bad;
        }
        exhaustive += dfs;
        sampled += smp;
        bad += b;
        for (int c; (c = std::fgetc(j.out)) != EOF;) std::putchar(c);
        std::fclose(j.out);
        std::fflush(stdout);
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("explored %zu schedules (%zu exhaustive up to size %zu, %zu sampled) in %.1f s\n",
                exhaustive + sampled, exhaustive, dfs_cap, sampled, took);
    return bad ? 1 : 0;
}
