// The layer's own references on the ICD's objects: one owner each, released
// through next() when the owner goes.  An IcdRef holds one reference; it
// never takes one of its own except through retain(), so adopting what a
// create or an enqueue returned costs nothing, and a pass-through call never
// meets one.  Move-only: a second reference is a visible retain().
//
// A reference that leaves the layer (an event or memory object handed to
// the application, which releases it) leaves by hand_off(), so that every
// handle the layer does not release itself says so where it goes.
//
// The application's own clRetain* / clRelease* calls pass through the
// layer's entry points unchanged: they are the application's references,
// not the layer's, and are not held here.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/worker.hpp"

namespace cldmabuf {

namespace icd_ref_detail {
inline cl_int retain(cl_event e) { return next().clRetainEvent(e); }
inline cl_int release(cl_event e) { return next().clReleaseEvent(e); }
inline cl_int retain(cl_mem m) { return next().clRetainMemObject(m); }
inline cl_int release(cl_mem m) { return next().clReleaseMemObject(m); }
inline cl_int retain(cl_command_queue q) { return next().clRetainCommandQueue(q); }
inline cl_int release(cl_command_queue q) { return next().clReleaseCommandQueue(q); }
inline cl_int retain(cl_context c) { return next().clRetainContext(c); }
inline cl_int release(cl_context c) { return next().clReleaseContext(c); }
}  // namespace icd_ref_detail

template <typename Handle>
class IcdRef {
public:
    IcdRef() noexcept = default;
    // Takes over a reference the caller holds (a create's result, an
    // enqueue's event); null holds nothing.
    explicit IcdRef(Handle handle) noexcept : handle_(handle) {}
    // A reference of its own on a handle someone else holds.
    static IcdRef retain(Handle handle) {
        if (handle) icd_ref_detail::retain(handle);
        return IcdRef(handle);
    }
    IcdRef(IcdRef &&other) noexcept : handle_(other.hand_off()) {}
    IcdRef &operator=(IcdRef &&other) noexcept {
        if (this != &other) {
            reset();
            handle_ = other.hand_off();
        }
        return *this;
    }
    IcdRef(const IcdRef &) = delete;
    IcdRef &operator=(const IcdRef &) = delete;
    ~IcdRef() { reset(); }

    Handle get() const noexcept { return handle_; }
    explicit operator bool() const noexcept { return handle_ != nullptr; }
    // The handle as a list of one (a wait list, clWaitForEvents).
    const Handle *as_list() const noexcept { return &handle_; }

    // Where an ICD call writes the new reference it returns (an enqueue's
    // `event` argument); what was held is released first.
    Handle *out() noexcept {
        reset();
        return &handle_;
    }
    // The reference leaves: to the application, or to a record that
    // releases it later.  The holder is empty afterwards.
    [[nodiscard]] Handle hand_off() noexcept { return std::exchange(handle_, nullptr); }
    // Releases the reference now.
    void reset() noexcept {
        if (handle_) icd_ref_detail::release(std::exchange(handle_, nullptr));
    }

private:
    Handle handle_ = nullptr;
};

using IcdEvent = IcdRef<cl_event>;
using IcdMem = IcdRef<cl_mem>;
using IcdQueue = IcdRef<cl_command_queue>;
using IcdContext = IcdRef<cl_context>;

// References on several objects of one kind, laid out as the ICD takes a
// list (an event wait list): data() and size() go straight to an enqueue.
template <typename Handle>
class IcdRefs {
public:
    IcdRefs() = default;
    IcdRefs(IcdRefs &&other) noexcept : handles_(std::move(other.handles_)) { other.handles_.clear(); }
    IcdRefs &operator=(IcdRefs &&other) noexcept {
        if (this != &other) {
            reset();
            handles_ = std::move(other.handles_);
            other.handles_.clear();
        }
        return *this;
    }
    IcdRefs(const IcdRefs &) = delete;
    IcdRefs &operator=(const IcdRefs &) = delete;
    ~IcdRefs() { reset(); }

    // Takes over `ref`'s reference (nothing for an empty one).
    void add(IcdRef<Handle> ref) {
        if (!ref) return;
        handles_.reserve(handles_.size() + 1);  // may throw: `ref` still owns it then
        handles_.push_back(ref.hand_off());
    }
    // Takes a reference of its own on each handle.
    void retain_all(std::span<const Handle> handles) {
        for (Handle h : handles) add(IcdRef<Handle>::retain(h));
    }
    // The last reference leaves the list (empty: an empty holder).
    IcdRef<Handle> take_back() noexcept {
        if (handles_.empty()) return IcdRef<Handle>();
        IcdRef<Handle> last(handles_.back());
        handles_.pop_back();
        return last;
    }
    const Handle *data() const noexcept { return handles_.data(); }
    size_t size() const noexcept { return handles_.size(); }
    bool empty() const noexcept { return handles_.empty(); }
    Handle operator[](size_t i) const noexcept { return handles_[i]; }
    const Handle *begin() const noexcept { return handles_.data(); }
    const Handle *end() const noexcept { return handles_.data() + handles_.size(); }
    // Releases (and drops from the list) each reference `done` answers true for.
    template <typename Pred>
    void release_if(Pred done) {
        handles_.erase(std::remove_if(handles_.begin(), handles_.end(),
                                      [&](Handle h) {
                                          if (!done(h)) return false;
                                          icd_ref_detail::release(h);
                                          return true;
                                      }),
                       handles_.end());
    }
    // Releases every reference now.
    void reset() noexcept {
        for (Handle h : handles_) icd_ref_detail::release(h);
        handles_.clear();
    }

private:
    std::vector<Handle> handles_;
};

using IcdEvents = IcdRefs<cl_event>;
using IcdMems = IcdRefs<cl_mem>;
using IcdQueues = IcdRefs<cl_command_queue>;

// Releases what `held` holds (an IcdRef or IcdRefs) on `key`'s worker
// (layer/core/worker.hpp), after the jobs posted before: the one way to let
// go of references from inside an ICD callback, where calling back into the
// ICD is not allowed.
template <typename Holder>
void release_on_worker(const void *key, Holder held) {
    auto box = std::make_shared<Holder>(std::move(held));  // a job is copyable; the holder is not
    post_to_worker(key, [box] { box->reset(); });
}

}  // namespace cldmabuf
