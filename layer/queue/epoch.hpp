// The enqueue epoch: how the layer knows that nothing came between two
// points of its own on the application's queues (the quiet queue,
// layer/queue/quiet.hpp; the blitter's semaphore chain,
// layer/blit/fence_chain.hpp) without asking the ICD.
//
// The layer sees only what passes through its dispatch slots, so every
// clEnqueue* slot goes through the layer (the pass-throughs of
// layer/queue/passthrough.hpp, the entry chains, the overrides) and counts
// the command in one process-wide word:
//
//   bits  0..19  commands in flight: counted, their call to the ICD has not
//                returned yet, so they may or may not be in their queue;
//   bits 20..63  the epoch: commands whose call to the ICD returned (or that
//                are counted as landed, below).
//
// A command belongs to an epoch only once the ICD has it.  Counted into the
// epoch before the ICD had it, another thread's clFinish could read an epoch
// that already included a kernel not yet in the queue; the finish would
// record the queue quiet, and a release ordered after the kernel would skip
// its marker and do SYNC END while the kernel wrote.
//
// The invariant every reader relies on (written in docs/layer-rules.md,
// "The queue protocol"):
//
//   If two reads of the word, A before B, are equal and A has no command in
//   flight, then no application command entered or left an ICD call between
//   them, and every command counted before A is in its queue.
//
// A reader takes A *before* its own command lands (the quiet point: clFinish
// reads it before the ICD's finish; a semaphore wait before its marker) and
// B *after* the later command is counted (a handoff's own begin, then +1) or
// in its queue (the blitter copy).  Memory order: begin/end are locked adds
// (release), reads acquire, so a reader that sees a command's end also sees
// the ICD's queue state that command left.
//
// Counted as landed at once, never in flight: a command that began while no
// import was alive (the pass-throughs' fast half, layer/queue/passthrough.hpp).
// Its time in flight cannot matter: whatever it uses existed before any
// import did, so no handoff or blitter copy can be about its memory, and an
// application that raced it against its own later commands cannot rely on
// its order anyway.
//
// What the word cannot see: an extension enqueue the ICD hands out by name
// that the layer could not put behind a counting trampoline
// (layer/queue/looked_up.hpp).  The lookup is seen: note_unseen_enqueue()
// turns the quiet queue and the chain's automatic mode off for the rest of
// the process.
#pragma once

#include <atomic>
#include <cstdint>

// Every target Debian builds the layer for but armel has them (i386: cmpxchg8b,
// armhf: ldrexd/strexd); a lock behind the word would make every counted
// enqueue take it.
static_assert(sizeof(std::atomic<uint64_t>) == sizeof(uint64_t) && std::atomic<uint64_t>::is_always_lock_free,
              "the enqueue word needs lock-free 64-bit atomics");

namespace cldmabuf {

namespace enqueue_epoch_detail {
// Hidden: addressed relative to the code, no GOT load on the pass-throughs.
extern std::atomic<uint64_t> word __attribute__((visibility("hidden")));
extern std::atomic<bool> unseen __attribute__((visibility("hidden")));
}  // namespace enqueue_epoch_detail

constexpr int kInFlightBits = 20;
constexpr uint64_t kInFlightOne = 1;
constexpr uint64_t kEpochOne = uint64_t{1} << kInFlightBits;

// One read of the word (acquire: see the queue state of every end it sees).
struct EpochWord {
    uint64_t raw = 0;
    uint64_t in_flight() const { return raw & (kEpochOne - 1); }
    uint64_t epoch() const { return raw >> kInFlightBits; }
    bool operator==(const EpochWord &) const = default;
};

inline EpochWord read_epoch() { return {enqueue_epoch_detail::word.load(std::memory_order_acquire)}; }

// An application command is about to go to the ICD.
inline void begin_command() { enqueue_epoch_detail::word.fetch_add(kInFlightOne, std::memory_order_acq_rel); }
// Its call to the ICD returned (whatever it answered: a refused command left
// nothing in the queue, which is as good as landed).
inline void end_command() { enqueue_epoch_detail::word.fetch_add(kEpochOne - kInFlightOne, std::memory_order_acq_rel); }

// A command counted as landed at once (see above), or a mark of the layer's
// own that makes every earlier reading stale (layer/blit/fence_chain).
inline void count_landed() { enqueue_epoch_detail::word.fetch_add(kEpochOne, std::memory_order_acq_rel); }

// begin_command() for its scope: the entry chains and the layer's own
// commands that go to the ICD (end_command() when it returns).
class CountedCommand {
public:
    CountedCommand() { begin_command(); }
    ~CountedCommand() { end_command(); }
    CountedCommand(const CountedCommand &) = delete;
    CountedCommand &operator=(const CountedCommand &) = delete;
};

// The application was handed an enqueue function the layer does not see
// (`name`, for the log line): logged once at debug, then unseen_enqueues()
// stays true for the process.
void note_unseen_enqueue(const char *name);
inline bool unseen_enqueues() { return enqueue_epoch_detail::unseen.load(std::memory_order_relaxed); }

// Whether an extension function the next table handed out for `name` is an
// enqueue the layer does not see: a clEnqueue* name other than the ones the
// loaders answer with their own dispatcher, which calls the layer's slot
// (the EGL and GL sharing enqueues).  Pure: unit-tested.
bool unseen_enqueue_name(const char *name);

}  // namespace cldmabuf
