// The copy route's write-back between imports of one dma-buf, as pure
// functions: what one import's acquire/release cycle knows, and what each
// event does to it.  layer/handoff/alias_merge.cpp keeps these states in
// the dma-buf's own record and carries the actions out;
// tests/unit/test_copy_cycle_explorer.cpp runs every order of small
// scenarios over these functions against a model of the bytes.
//
// An import on the copy route works on its own device copy: the acquire
// uploads the dma-buf's bytes into it, the release writes it back.  Where
// another import of the same dma-buf is alive, a whole write-back would put
// this copy's stale bytes over what the other import wrote.  The invariant:
// the release of an aliased import writes into the dma-buf exactly the
// bytes its device copy holds that differ from what its acquire uploaded;
// every other byte is left as it is.  So an acquire that runs while the
// dma-buf is aliased keeps what it uploads (a snapshot), its release reads
// the device copy into a scratch of its own and merges the differing bytes.
//
// Two kinds of state, because of pipelining (acquire, kernel, release,
// acquire, kernel, release, all enqueued before the first one runs):
// - what the import holds *now* (CycleState): its last acquire ran and its
//   release has not, and whether a snapshot of what that acquire uploaded
//   is kept.  It changes when steps run, in queue order.
// - what one release *command* does (WriteBack), decided when it is
//   enqueued, because its Read is enqueued then and needs its destination:
//   the dma-buf (whole) or the command's own scratch.  Each release command
//   owns its scratch, so a second release enqueued before the first ran
//   never shares or resets the first one's.
#pragma once

namespace cldmabuf {

// One import's state between the steps that run.
struct CycleState {
    bool held = false;   // its last acquire ran, its release has not run yet
    bool armed = false;  // a snapshot of what that acquire uploaded is kept
    bool operator==(const CycleState &o) const { return held == o.held && armed == o.armed; }
};

enum class CycleEvent {
    acquire_ran_alone,    // an acquire's upload, no other live import of the dma-buf
    acquire_ran_aliased,  // an acquire's upload, another live import exists
    alias_appeared,       // another import of the dma-buf was created
    release_ran,          // a release's write-back finished (or failed)
};

struct CycleStep {
    CycleState next;
    bool take_snapshot = false;  // keep the dma-buf's bytes now (they are what the acquire uploaded)
};

// Acquire while alone: no snapshot; an alias that appears while held takes
// it then — nothing wrote the dma-buf meanwhile (no other import existed to
// release into it, and the external side waits for the release).
CycleStep cycle_step(CycleState state, CycleEvent event);

// A release command's write-back, decided at its enqueue.
enum class WriteBack {
    direct,   // the Read goes straight into the dma-buf (alone, no snapshot kept)
    scratch,  // the Read goes into the command's scratch; finish_write_back decides
};
// `aliased`: another live import now; `armed`: the import keeps a snapshot now.
WriteBack decide_write_back(bool aliased, bool armed);

// What the release does with its scratch when it runs.
enum class Finish {
    nothing,        // a direct write-back (the bytes are in already) or a failed command
    merge,          // write the bytes that differ from the snapshot
    whole_scratch,  // no snapshot (the alias went away before the acquire ran): the scratch whole
};
Finish finish_write_back(WriteBack decided, CycleState now, bool command_ok);

}  // namespace cldmabuf
