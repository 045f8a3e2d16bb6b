// Every order of small copy-route scenarios, run over the pure functions of
// layer/handoff/copy_cycle.hpp against a model of the bytes.
//
// The model: a dma-buf of a few words; each import has a device copy, a
// program of cycles on its own in-order queue, and the state the layer keeps
// (CycleState, per import, in the dma-buf's record).  A cycle is six events:
// on the application's thread the acquire and the release are enqueued
// (the release decides its WriteBack then: the Read is enqueued with its
// destination); on the queue the acquire's step runs (snapshot + upload),
// the kernel writes its word, the release's Read copies the device copy to
// the dma-buf or to the command's scratch, and the release's step finishes
// (merge, whole scratch, or nothing).  Constraints are only what OpenCL
// guarantees: the enqueues of one import in program order, a command after
// its enqueue, an in-order queue's commands in order.  Every other order is
// explored: enqueues of the second cycle before the first cycle ran
// (pipelining), the other import's steps anywhere, an alias created at any
// point, a failed kernel.
//
// After each order: every word some cycle wrote (and whose command did not
// fail) holds one of the values written to it, the last of its own writer's
// in queue order, and every other word holds its first value; the only
// exception is the one the design leaves out (an alias created after a
// release was enqueued direct: that Read writes the whole copy), which the
// checker allows only in exactly that case.
#include <catch2/catch_test_macros.hpp>

#include <cstdio>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "layer/handoff/copy_cycle.hpp"

using namespace cldmabuf;

namespace {

constexpr int words = 3;
using Bytes = std::vector<int>;

enum class Ev { acq_enq, rel_enq, acq_run, kernel, read, rel_run, alias };

struct Cycle {
    int word = 0;      // the word its kernel writes
    int value = 0;     // the value written
    bool fails = false;  // the kernel fails at run time: the release applies nothing
};

struct ImportProgram {
    std::vector<Cycle> cycles;
    bool alive_from_start = true;  // false: created by the `alias` event
};

struct Scenario {
    const char *name;
    std::vector<ImportProgram> imports;
};

// One import's progress through its program and what the layer keeps.
struct ImportRun {
    const ImportProgram *program = nullptr;
    bool alive = true;
    size_t enq = 0;  // events of the application's thread done (2 per cycle)
    size_t ran = 0;  // queue events done (4 per cycle)
    Bytes device = Bytes(words, 0);
    CycleState state;
    Bytes snapshot;
    struct Release {
        WriteBack decided = WriteBack::direct;
        Bytes scratch;
        bool direct_after_late_alias = false;  // the case the design leaves out
    };
    std::vector<Release> releases;
};

struct World {
    Bytes dmabuf = Bytes(words, 0);
    std::vector<ImportRun> imports;
    bool alias_made = false;
    bool leaves_out = false;  // some order hit the documented exception
    int live() const {
        int n = 0;
        for (const auto &i : imports) n += i.alive;
        return n;
    }
};

struct Move {
    int import;  // -1: the alias
    Ev ev;
};

// The queue events of a cycle in order.
constexpr Ev queue_events[4] = {Ev::acq_run, Ev::kernel, Ev::read, Ev::rel_run};

std::vector<Move> runnable(const World &w) {
    std::vector<Move> out;
    for (int i = 0; i < static_cast<int>(w.imports.size()); ++i) {
        const ImportRun &r = w.imports[i];
        if (!r.alive) continue;
        const size_t n = r.program->cycles.size();
        if (r.enq < 2 * n) out.push_back({i, r.enq % 2 == 0 ? Ev::acq_enq : Ev::rel_enq});
        if (r.ran < 4 * n) {
            const size_t cycle = r.ran / 4;
            const Ev ev = queue_events[r.ran % 4];
            // A command runs after its enqueue: acquire after acq_enq, the
            // Read and the release's step after rel_enq.
            const size_t needed = ev == Ev::acq_run || ev == Ev::kernel ? 2 * cycle + 1 : 2 * cycle + 2;
            if (r.enq >= needed) out.push_back({i, ev});
        }
    }
    bool late_pending = false;
    for (const auto &r : w.imports) late_pending |= !r.alive;
    if (late_pending && !w.alias_made) out.push_back({-1, Ev::alias});
    return out;
}

void apply(World &w, Move m) {
    if (m.ev == Ev::alias) {
        w.alias_made = true;
        for (auto &r : w.imports) {
            if (!r.alive) {
                r.alive = true;
                continue;
            }
            const CycleStep s = cycle_step(r.state, CycleEvent::alias_appeared);
            if (s.take_snapshot) r.snapshot = w.dmabuf;
            r.state = s.next;
            // A release enqueued direct and not run yet: its Read goes
            // whole into the dma-buf whatever happens now.
            for (size_t k = r.ran / 4; k < r.releases.size(); ++k)
                if (r.releases[k].decided == WriteBack::direct) r.releases[k].direct_after_late_alias = true;
        }
        return;
    }
    ImportRun &r = w.imports[m.import];
    const bool aliased = w.live() > 1;
    switch (m.ev) {
    case Ev::acq_enq: ++r.enq; break;
    case Ev::rel_enq:
        r.releases.push_back({decide_write_back(aliased, r.state.armed), {}, false});
        ++r.enq;
        break;
    case Ev::acq_run: {
        const CycleStep s =
            cycle_step(r.state, aliased ? CycleEvent::acquire_ran_aliased : CycleEvent::acquire_ran_alone);
        if (s.take_snapshot) r.snapshot = w.dmabuf;
        r.state = s.next;
        r.device = w.dmabuf;  // the upload
        ++r.ran;
        break;
    }
    case Ev::kernel: {
        const Cycle &c = r.program->cycles[r.ran / 4];
        if (!c.fails) r.device[c.word] = c.value;
        ++r.ran;
        break;
    }
    case Ev::read: {
        const Cycle &c = r.program->cycles[r.ran / 4];
        auto &rel = r.releases[r.ran / 4];
        // A failed command terminates the Read behind it.
        if (!c.fails) {
            if (rel.decided == WriteBack::direct) w.dmabuf = r.device;
            else rel.scratch = r.device;
        }
        ++r.ran;
        break;
    }
    case Ev::rel_run: {
        const Cycle &c = r.program->cycles[r.ran / 4];
        const auto &rel = r.releases[r.ran / 4];
        switch (finish_write_back(rel.decided, r.state, !c.fails)) {
        case Finish::nothing: break;
        case Finish::merge:
            for (int i = 0; i < words; ++i)
                if (rel.scratch[i] != r.snapshot[i]) w.dmabuf[i] = rel.scratch[i];
            break;
        case Finish::whole_scratch: w.dmabuf = rel.scratch; break;
        }
        r.state = cycle_step(r.state, CycleEvent::release_ran).next;
        ++r.ran;
        break;
    }
    case Ev::alias: break;
    }
}

// The check after a complete order.  Returns an empty string when it holds.
std::string check(const World &w) {
    for (int word = 0; word < words; ++word) {
        // The last value each import's successful cycles wrote to this word.
        std::vector<int> last;
        for (const auto &r : w.imports) {
            int v = -1;
            for (const auto &c : r.program->cycles)
                if (c.word == word && !c.fails) v = c.value;
            if (v >= 0) last.push_back(v);
        }
        const int got = w.dmabuf[word];
        if (last.empty()) {
            if (got != 0) return "word " + std::to_string(word) + " nobody wrote holds " + std::to_string(got);
            continue;
        }
        bool ok = false;
        for (int v : last) ok |= got == v;
        if (!ok) return "word " + std::to_string(word) + " holds " + std::to_string(got) + ", a lost or stale write";
    }
    return {};
}

struct Count {
    double schedules = 0;  // complete orders (counted as paths: they outgrow 64 bits in larger scenarios)
    double left_out = 0;   // of which in the documented exception
    size_t states = 0;     // distinct states explored
    std::string failure;
    std::string failing_order;
};

const char *name_of(Ev e) {
    switch (e) {
    case Ev::acq_enq: return "acq_enq";
    case Ev::rel_enq: return "rel_enq";
    case Ev::acq_run: return "acq_run";
    case Ev::kernel: return "kernel";
    case Ev::read: return "read";
    case Ev::rel_run: return "rel_run";
    case Ev::alias: return "alias";
    }
    return "?";
}

// The state of the world, as a key: two orders that reach the same state
// have the same futures, so each state is explored once and the number of
// complete orders through it is counted, not enumerated (the count is exact:
// every order is still accounted for, as a path through the states).
std::string key_of(const World &w) {
    std::string k;
    auto put = [&k](int v) { k += std::to_string(v) + ","; };
    auto put_bytes = [&](const Bytes &b) {
        put(static_cast<int>(b.size()));
        for (int v : b) put(v);
    };
    put_bytes(w.dmabuf);
    put(w.alias_made);
    for (const auto &r : w.imports) {
        put(r.alive), put(static_cast<int>(r.enq)), put(static_cast<int>(r.ran));
        put_bytes(r.device);
        put(r.state.held), put(r.state.armed);
        put_bytes(r.snapshot);
        for (const auto &rel : r.releases) {
            put(rel.decided == WriteBack::scratch), put(rel.direct_after_late_alias);
            put_bytes(rel.scratch);
        }
        k += "|";
    }
    return k;
}

struct Paths {
    double complete = 0;  // complete orders from this state
    double excused = 0;   // of which end in the documented exception
};

Paths explore(const World &w, std::vector<Move> &order, Count &count, std::unordered_map<std::string, Paths> &seen) {
    if (!count.failure.empty()) return {};
    const std::string key = key_of(w);
    if (auto it = seen.find(key); it != seen.end()) return it->second;
    Paths paths;
    const auto moves = runnable(w);
    if (moves.empty()) {
        bool excused = false;
        for (const auto &r : w.imports)
            for (const auto &rel : r.releases) excused |= rel.direct_after_late_alias;
        const std::string bad = check(w);
        paths.complete = 1;
        if (!bad.empty()) {
            if (excused) {
                paths.excused = 1;
            } else {
                count.failure = bad;
                for (const auto &m : order)
                    count.failing_order += (m.import < 0 ? std::string("-") : std::string(1, char('X' + m.import))) +
                                           ":" + name_of(m.ev) + " ";
            }
        }
    } else {
        for (const Move &m : moves) {
            World next = w;
            apply(next, m);
            order.push_back(m);
            const Paths p = explore(next, order, count, seen);
            order.pop_back();
            paths.complete += p.complete;
            paths.excused += p.excused;
        }
    }
    ++count.states;
    seen.emplace(key, paths);
    return paths;
}

Count run(const Scenario &s) {
    World w;
    for (const auto &p : s.imports) {
        ImportRun r;
        r.program = &p;
        r.alive = p.alive_from_start;
        w.imports.push_back(r);
    }
    Count count;
    std::vector<Move> order;
    std::unordered_map<std::string, Paths> seen;
    const Paths p = explore(w, order, count, seen);
    count.schedules = p.complete;
    count.left_out = p.excused;
    std::printf("copy-cycle explorer: %-60s %12.0f schedules, %7zu states (%.0f in the documented exception)\n",
                s.name, count.schedules, count.states, count.left_out);
    return count;
}

}  // namespace

TEST_CASE("copy route: every order of small scenarios keeps every write", "[copy-cycle][explorer]") {
    const std::vector<Scenario> scenarios = {
        {"pipelined twice through X, Y alive and idle", {{{{0, 1}, {0, 2}}}, {{}}}},
        {"pipelined twice through X, Y writes another word", {{{{0, 1}, {0, 2}}}, {{{1, 7}}}}},
        {"X and Y pipelined twice each, disjoint words", {{{{0, 1}, {0, 2}}}, {{{1, 5}, {1, 6}}}}},
        {"pipelined, the first kernel fails", {{{{0, 1, true}, {0, 2}}}, {{}}}},
        {"pipelined, the second kernel fails", {{{{0, 1}, {2, 2, true}}}, {{{1, 4}}}}},
        {"alone, then an alias made at any point writes another word", {{{{0, 1}, {0, 2}}}, {{{1, 9}}, false}}},
        {"alone and pipelined, an idle alias made at any point", {{{{0, 1}, {0, 2}}}, {{}, false}}},
    };
    double total = 0;
    for (const auto &s : scenarios) {
        const Count c = run(s);
        INFO(s.name << ": " << c.failure << "\n  order: " << c.failing_order);
        CHECK(c.failure.empty());
        CHECK(c.schedules > 0);
        total += c.schedules;
    }
    std::printf("copy-cycle explorer: explored %.0f schedules in all (exhaustive)\n", total);
}

// The checker catches what it is there for: a release whose merge is
// skipped (what a per-import "merging" flag, switched off by the previous
// release's finish, did to the second of two pipelined releases) loses the
// second write, and check() says so.
TEST_CASE("copy-cycle explorer: a skipped merge of the second pipelined release is caught", "[copy-cycle][explorer]") {
    World w;
    ImportProgram x{{{0, 1}, {0, 2}}};
    ImportProgram y{{}};
    w.imports.resize(2);
    w.imports[0].program = &x;
    w.imports[1].program = &y;
    for (Ev e : {Ev::acq_enq, Ev::rel_enq, Ev::acq_enq, Ev::rel_enq}) apply(w, {0, e});
    for (Ev e : {Ev::acq_run, Ev::kernel, Ev::read, Ev::rel_run, Ev::acq_run, Ev::kernel, Ev::read}) apply(w, {0, e});
    CHECK(w.imports[0].releases[1].decided == WriteBack::scratch);
    ++w.imports[0].ran;  // the second release's finish, its merge skipped
    CHECK(w.dmabuf[0] == 1);
    CHECK_FALSE(check(w).empty());
}
