#include "layer/handoff/acquire_opening.hpp"

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "layer/handoff/acquire_fences.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/log.hpp"

namespace cldmabuf {

class AcquireOpening {
public:
    explicit AcquireOpening(std::shared_ptr<Import> import) : import_(std::move(import)) {}
    ~AcquireOpening();
    AcquireOpening(const AcquireOpening &) = delete;
    AcquireOpening &operator=(const AcquireOpening &) = delete;

    // Under openings_mutex: whether the step finished its opening (the
    // release then attaches itself), and the fences handed over until then.
    bool finished = false;
    uint64_t sequence = 0;  // enqueue order among the import's openings
    std::vector<std::shared_ptr<sync::DmabufSignal>> handed;
    std::shared_ptr<Import> import_;
};

namespace {

// Every opening not yet destroyed, by import.  Leaked on purpose (steps may
// still be destroyed by ICD threads at exit).
std::mutex openings_mutex;
auto *openings = new std::unordered_multimap<const Import *, AcquireOpening *>;
uint64_t next_sequence = 0;  // under openings_mutex

}  // namespace

AcquireOpening::~AcquireOpening() {
    std::lock_guard lock(openings_mutex);
    auto range = openings->equal_range(import_.get());
    for (auto it = range.first; it != range.second; ++it)
        if (it->second == this) {
            openings->erase(it);
            break;
        }
    // A step dropped without running: the fences handed to it were never
    // attached; their releases signal them, which retires them.
}

cl_int open_acquire(const Import &import) {
    const uint64_t access = import.sync_access_flags();
    if (cl_int err = wait_acquire_fences(import, access, "acquire"); err != CL_SUCCESS) return err;
    return sync_start(import, access, "acquire");
}

std::shared_ptr<AcquireOpening> make_acquire_opening(const std::shared_ptr<Import> &import) {
    auto opening = std::make_shared<AcquireOpening>(import);
    std::lock_guard lock(openings_mutex);
    opening->sequence = next_sequence++;
    openings->emplace(import.get(), opening.get());
    return opening;
}

cl_int open_in_step(AcquireOpening &opening) {
    const cl_int err = open_acquire(*opening.import_);
    std::vector<std::shared_ptr<sync::DmabufSignal>> handed;
    {
        std::lock_guard lock(openings_mutex);
        opening.finished = true;
        handed.swap(opening.handed);
    }
    if (err != CL_SUCCESS) return err;  // the releases signal theirs: nothing was attached
    for (const auto &fence : handed)
        if (int failed = fence->attach(opening.import_->fd); failed < 0)
            LOG_DEBUG("acquire: the release fence handed over did not attach to dma-buf fd %d (%s); its "
                      "consumers see only the earlier fences", opening.import_->fd, std::strerror(-failed));
    return CL_SUCCESS;
}

bool hand_fence_to_acquire(const Import &import, std::shared_ptr<sync::DmabufSignal> fence) {
    std::lock_guard lock(openings_mutex);
    AcquireOpening *newest = nullptr;
    auto range = openings->equal_range(&import);
    for (auto it = range.first; it != range.second; ++it)
        if (!it->second->finished && (!newest || it->second->sequence > newest->sequence)) newest = it->second;
    if (!newest) return false;
    newest->handed.push_back(std::move(fence));
    return true;
}

}  // namespace cldmabuf
