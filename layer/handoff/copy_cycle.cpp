#include "layer/handoff/copy_cycle.hpp"

namespace cldmabuf {

CycleStep cycle_step(CycleState s, CycleEvent e) {
    switch (e) {
    case CycleEvent::acquire_ran_alone: return {{true, false}, false};
    case CycleEvent::acquire_ran_aliased: return {{true, true}, true};
    case CycleEvent::alias_appeared:
        // Only an import held while alone has bytes to keep; one not held
        // snapshots at its next acquire, one armed has its snapshot.
        if (s.held && !s.armed) return {{true, true}, true};
        return {s, false};
    case CycleEvent::release_ran: return {{false, false}, false};
    }
    return {s, false};
}

WriteBack decide_write_back(bool aliased, bool armed) {
    // Armed but no longer aliased: the alias went away after the acquire,
    // yet what it wrote may be in the dma-buf; the merge keeps it.
    return aliased || armed ? WriteBack::scratch : WriteBack::direct;
}

Finish finish_write_back(WriteBack decided, CycleState now, bool command_ok) {
    // After a failed command the dma-buf is left as it was.
    if (decided == WriteBack::direct || !command_ok) return Finish::nothing;
    return now.armed ? Finish::merge : Finish::whole_scratch;
}

}  // namespace cldmabuf
