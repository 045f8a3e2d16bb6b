// Moved to layer/import/image.hpp (issue #15, one import pipeline).  Kept
// only so code that other parts of the layer are moving at the same time
// builds unchanged; include layer/import/image.hpp in new code.
#pragma once

#include "layer/import/image.hpp"
