#!/usr/bin/python3
"""Runs the pytest suite for meson test: ``python3 run_pytest.py [pytest args]``.

Exit status: pytest's, except 77 (meson's "skipped") when pytest or
pyopencl is missing, when no test was collected (pytest's 5) or when every
test was skipped: a suite that checked nothing must not read as a pass.
"""

import os
import sys


class _Tally:
    def __init__(self):
        self.passed = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed:
            self.passed += 1


def main():
    try:
        import pytest
    except ImportError:
        print("SKIP: pytest is not installed (Debian: python3-pytest)")
        return 77
    tally = _Tally()
    here = os.path.dirname(os.path.abspath(__file__))
    # -p no:cacheprovider: no .pytest_cache in the source tree; -rs: the
    # reasons of skips in the log.
    code = pytest.main(["-p", "no:cacheprovider", "-rs", "-v", here] + sys.argv[1:], plugins=[tally])
    if code == pytest.ExitCode.NO_TESTS_COLLECTED or (code == pytest.ExitCode.OK and tally.passed == 0):
        print("SKIP: no test ran (%s)" % ("none collected" if code else "all skipped"))
        return 77
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
