#include "layer/handoff/acquire_opening.hpp"

#include <cstring>
#include <mutex>
#include <unordered_map>

#include "layer/dmabuf/primitives.hpp"
#include "layer/handoff/acquire_fences.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/log.hpp"
#include "layer/stats.hpp"

namespace cldmabuf {

class AcquireOpening {
public:
    explicit AcquireOpening(std::shared_ptr<Import> import) : import_(std::move(import)) {}
    ~AcquireOpening();
    AcquireOpening(const AcquireOpening &) = delete;
    AcquireOpening &operator=(const AcquireOpening &) = delete;

    // pending: neither side has begun; opened_ahead: a release did it, the
    // step skips it; opening: the step is at it (a release must not attach);
    // done: the step finished it (whatever its result).
    enum class State { pending, opened_ahead, opening, done };
    State state = State::pending;  // under openings_mutex
    std::shared_ptr<Import> import_;
};

namespace {

// Every opening not yet destroyed, by import.  Leaked on purpose (steps may
// still be destroyed by ICD threads at exit).
std::mutex openings_mutex;
auto *openings = new std::unordered_multimap<const Import *, AcquireOpening *>;

}  // namespace

AcquireOpening::~AcquireOpening() {
    std::lock_guard lock(openings_mutex);
    auto range = openings->equal_range(import_.get());
    for (auto it = range.first; it != range.second; ++it)
        if (it->second == this) {
            openings->erase(it);
            break;
        }
}

cl_int open_acquire(const Import &import) {
    const uint64_t access = import.sync_access_flags();
    if (cl_int err = wait_acquire_fences(import, access, "acquire"); err != CL_SUCCESS) return err;
    return sync_start(import, access, "acquire");
}

std::shared_ptr<AcquireOpening> make_acquire_opening(const std::shared_ptr<Import> &import) {
    auto opening = std::make_shared<AcquireOpening>(import);
    std::lock_guard lock(openings_mutex);
    openings->emplace(import.get(), opening.get());
    return opening;
}

cl_int open_in_step(AcquireOpening &opening) {
    {
        std::lock_guard lock(openings_mutex);
        if (opening.state == AcquireOpening::State::opened_ahead) {
            opening.state = AcquireOpening::State::done;
            return CL_SUCCESS;
        }
        opening.state = AcquireOpening::State::opening;
    }
    const cl_int err = open_acquire(*opening.import_);
    std::lock_guard lock(openings_mutex);
    opening.state = AcquireOpening::State::done;
    return err;
}

bool open_acquires_ahead(const Import &import) {
    const uint64_t access = import.sync_access_flags();
    // Held across the START: it returns at once (nothing pending), and the
    // step must not begin its own meanwhile.
    std::lock_guard lock(openings_mutex);
    auto range = openings->equal_range(&import);
    for (auto it = range.first; it != range.second; ++it) {
        AcquireOpening &o = *it->second;
        if (o.state == AcquireOpening::State::opening) return false;
        if (o.state != AcquireOpening::State::pending) continue;
        // Nothing pending now: the acquire's fences are done and START cannot wait.
        if (!fences_signalled_now(import, access)) return false;
        stats().fence_waits++;
        stats().syncs++;
        if (int err = dmabuf_sync(import.fd, DMABUF_SYNC_START | access); err < 0) {
            LOG_DEBUG("release: opening the acquire of dma-buf fd %d ahead failed (SYNC START: %s); its step "
                      "does it, and the release attaches no fence", import.fd, std::strerror(-err));
            return false;
        }
        o.state = AcquireOpening::State::opened_ahead;
        LOG_DEBUG("release: opened the pending acquire of dma-buf fd %d ahead (no fence pending), so its step "
                  "does not wait for the release's fence", import.fd);
    }
    return true;
}

}  // namespace cldmabuf
