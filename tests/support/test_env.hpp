// The test lanes' environment switches (CLDMABUF_IMPORT=copy, CLDMABUF_BLT=off,
// CLDMABUF_TEST_DMABUF=sim, ...): one spelling of "is it set to this value".
#pragma once

#include <cstdlib>
#include <cstring>

namespace cldmabuf::test {

inline bool env_is(const char *name, const char *value) {
    const char *v = std::getenv(name);
    return v && std::strcmp(v, value) == 0;
}

}  // namespace cldmabuf::test
