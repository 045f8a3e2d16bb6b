// Releasing an import and waiting until the ICD destroyed it, for the tests
// that check what the layer let go (fds, mappings) once the object is gone:
// the layer's destructor callback, registered first, has run by then.
#pragma once

#include "cl_fixture.hpp"

namespace e2e {

// Releases `mem` (its last reference), finishes the queue and waits up to
// 1 s for its destructor callbacks; each step REQUIREd.
void destroy(const ClEnv &env, cl_mem mem);

}  // namespace e2e
