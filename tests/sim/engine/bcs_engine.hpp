// The virtual Gen9 blitter engine (BCS): command-parser checks and execution.
//
// Split from the i915 device model (tests/sim/*.cpp) so that the command
// decoding and tile arithmetic can be tested on their own against a CPU
// oracle.  Test instrument only: the layer never links this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace vgen9 {

// GPU virtual address -> host bytes, built by the device model from the
// softpinned offsets of one execbuffer.  Returns nullptr when [addr, addr+len)
// is not wholly inside one bound object (the engine then behaves like the
// scratch page: reads zero, writes dropped, and logs).
class AddressSpace {
public:
    virtual ~AddressSpace() = default;
    virtual uint8_t *translate(uint64_t gpu_addr, uint64_t len) = 0;
};

// Engine state that survives between commands of a batch.
struct BcsState {
    uint32_t bcs_swctrl = 0;  // bit0 SRC_Y, bit1 DST_Y (masked-register semantics applied)
};

using LogFn = std::function<void(const std::string &)>;

// The Gen9 BCS command parser, run synchronously inside execbuffer as i915
// does: 0, -EINVAL (command runs past the batch, no MI_BATCH_BUFFER_END,
// unknown command) or -EACCES (LRI to a register outside the whitelist).
// `why` receives a one-line reason on failure.
int check_batch(const uint32_t *batch, size_t len_bytes, std::string *why);

// Execute an already-checked batch.  Returns 0, or -EIO when the engine
// meets something it cannot execute (the model's "hang").
int execute_batch(const uint32_t *batch, size_t len_bytes, AddressSpace &as, BcsState &state,
                  const LogFn &log);

}  // namespace vgen9
