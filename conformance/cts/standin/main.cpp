// The module's main, as in every CTS extension module: the registered tests
// through the harness (here the stand-in).
#include "harness/testHarness.h"

int main(int argc, const char *argv[]) {
    return runTestHarness(argc, argv, test_registry::getInstance().num_tests(),
                          test_registry::getInstance().definitions(), false, 0);
}
