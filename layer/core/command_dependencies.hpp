// Which queued acquires each command may wait for: what a release needs to
// know to put its fence where no acquire it waits for meets it
// (docs/layer-rules.md, "One state per dma-buf": where a release's fence may
// go).  Recorded at every clEnqueue* the layer passes through: a command may
// wait for the acquires of its wait list's events' records, for those of
// every earlier command of its queue when the queue is in order (or the
// command is a marker or barrier without a wait list), for those of the
// queue's last barrier otherwise, and for the acquires its own call made.
//
// What the layer cannot see counts as "may wait for every acquire": a user
// event, an event the layer did not record (made by the ICD's unseen
// enqueues or while no import was alive), a command the layer does not look
// into (a semaphore wait, the VA-API and GL/EGL acquires: `opaque`), or an
// enqueue handed out by name that the layer does not see (the release asks
// unseen_enqueues(), layer/queue/epoch.hpp).  A
// callback or another thread may end those after any acquire opened.  Such
// an event is held (retained) while a record names it, and counts only while
// it is pending: once a user event ended, the records naming it say what the
// layer's own commands say.
//
// An acquire is named by its opening's serial (layer/handoff/acquire_opening.hpp),
// which stays in the records only while the opening lives: a record never
// grows past the openings alive.
//
// The cost: nothing while no opening is alive and the command has no wait
// list and its queue's record is empty (one relaxed load each); else one
// lock and a lookup of the queue and of each waited event.  Not recorded:
// commands enqueued while no import was alive (the pass-throughs' fast
// half); an in-order queue that ran such a command behind a user event that
// the application completes only after another queue's acquire opened
// makes that acquire wait for the release's fence until the fence timeout.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/core/icd_ref.hpp"

namespace cldmabuf {

struct MayWaitFor {
    std::vector<uint64_t> openings = {};             // acquire openings' serials (alive when recorded)
    // Events the layer did not record (it cannot see through them), pending
    // when recorded: held while named.
    std::vector<std::shared_ptr<const IcdEvent>> unseen = {};
    bool opaque = false;                             // a command the layer cannot see through (it waits for anything)
    // Whether it may wait for every acquire: opaque, or an unseen event still
    // pending (a status query each).
    bool everything() const;
};

// How a command orders itself in its queue.
enum class CommandShape {
    plain,    // its wait list, and on an in-order queue every earlier command
    marker,   // a marker: without a wait list every earlier command of the queue
    barrier,  // a barrier: as a marker, and every later command of the queue waits for it
};

// What a command about to be enqueued on `queue` with that wait list may wait for.
MayWaitFor may_wait_for(cl_command_queue queue, cl_uint num_events, const cl_event *wait_list,
                        CommandShape shape = CommandShape::plain);

// A command was enqueued (`enqueued`: the ICD took it): its queue's record
// and its event's (`event`, when the application asked for one) now say
// what it may wait for, with `made` (the acquire openings its own call made).
// `opaque`: the layer cannot see what it waits for.
void note_enqueued(cl_command_queue queue, cl_uint num_events, const cl_event *wait_list, const cl_event *event,
                   bool enqueued, CommandShape shape = CommandShape::plain, const std::vector<uint64_t> &made = {},
                   bool opaque = false);

// The application was handed an enqueue whose wait list the layer does not
// see (an ICD function behind a counting trampoline, layer/queue/looked_up.hpp):
// every command may wait for anything from now on.
void note_unrecorded_enqueue();

// Openings: a serial for a new one, alive until it is gone (retired).
uint64_t new_opening_serial();
void opening_gone(uint64_t serial);
// Whether the acquire of opening `later` waits for that of `earlier` (both alive).
bool opening_waits_for(uint64_t later, uint64_t earlier);

// Handles the ICD may give to new objects: the event's record goes at the
// application's release (or a user event's creation), the queue's at its
// creation and release.  clFinish returned: the queue has nothing left to
// wait for.
void forget_event_dependencies(cl_event event);
void forget_queue_dependencies(cl_command_queue queue);

// The application set a user event's status: whatever waited for it may now
// say less.  `listener` runs then (on the application's thread), set once
// (the handoff narrows its hand-overs, layer/handoff/acquire_opening.hpp).
void on_user_event_ended(void (*listener)());
void note_user_event_ended();

}  // namespace cldmabuf
