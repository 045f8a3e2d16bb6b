// The layer's log lines ("cldmabuf: ...") a call writes to stderr, for the
// suites that check "one clear log line" per bad input or fault (the bad-input
// catalogue, the EGL fault sweep).  stderr goes to a temporary file while
// `run` runs; lines of anyone else are dropped.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace cldmabuf::test {

// REQUIREs the temporary file (Catch2).
std::vector<std::string> captured_log(const std::function<void()> &run);

}  // namespace cldmabuf::test
