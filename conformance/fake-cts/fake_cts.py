#!/usr/bin/env python3
"""Stand-in for one Khronos OpenCL-CTS suite binary, for testing run-cts.

It is installed (copied or symlinked) under a suite's binary name, e.g.
``test_buffers``.  Its behaviour comes from ``<argv[0]>.json`` next to it:

    {
      "tests": {                      # in registration order
        "buffer_read":  "pass",       # same result with and without a layer
        "buffer_write": {"without": "pass", "with": "fail"}
      },
      "options": ["2D", "CL_FILTER_NEAREST"],   # suite-specific args to ignore
      "init": {"without": "ok", "with": "ok"},  # ok | skip | fail | error
      "exit_code_on_crash": null
    }

Results: pass, fail, skip (TEST_SKIPPED_ITSELF), skip_version (min_version
not met), crash (SIGSEGV mid-test), abort (exit(3) mid-test, no signal),
timeout (sleeps for a long time mid-test), clfinish_fail.

"With a layer" means OPENCL_LAYERS is set and non-empty in the environment.

The printed lines copy the *format* of the CTS harness, as read in
KhronosGroup/OpenCL-CTS b8f8906c:
  - test_common/harness/testHarness.cpp: callSingleTestFunction()
    ("%s...", "%s passed", "%s FAILED", "%s test not supported",
    "%s skipped (requires at least ...)"), print_results()
    ("PASSED %d of %d %ss." / "FAILED %d of %d %ss." / "PASSED %s."),
    suite_did_not_pass_init() ("Test %s while initialization",
    "%s %d of %d tests."), list_tests() ("\t%s" per name for --list),
    saveResultsToJson() (CL_CONFORMANCE_RESULTS_FILENAME),
    runTestHarnessWithCheckAndParse() (CL_DEVICE_TYPE, CL_PLATFORM_INDEX,
    CL_DEVICE_INDEX environment variables, "Requesting ... device" line);
  - test_common/harness/errorHelpers.h: log_info/log_error are printf
    (stdout), print_error prints "ERROR: %s! (%s from %s:%d)";
  - test_common/harness/kernelHelpers.cpp: printDeviceHeader().
No code of the CTS is used.
"""
import json
import os
import signal
import sys
import time

DEVICE_TYPES = {
    "all": "any", "CL_DEVICE_TYPE_ALL": "any",
    "gpu": "GPU", "CL_DEVICE_TYPE_GPU": "GPU",
    "cpu": "CPU", "CL_DEVICE_TYPE_CPU": "CPU",
    "accelerator": "Accelerator", "CL_DEVICE_TYPE_ACCELERATOR": "Accelerator",
    "custom": "Custom", "CL_DEVICE_TYPE_CUSTOM": "Custom",
    "default": "Default", "CL_DEVICE_TYPE_DEFAULT": "Default",
}


def out(text):
    sys.stdout.write(text + "\n")


def main(argv):
    spec_path = argv[0] + ".json"
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    mode = "with" if os.environ.get("OPENCL_LAYERS") else "without"
    tests = spec.get("tests", {})
    names = list(tests)
    options = set(spec.get("options", []))

    def behaviour(name):
        b = tests[name]
        return b if isinstance(b, str) else b.get(mode, "pass")

    args = argv[1:]
    if "--list" in args or "-list" in args:
        for name in sorted(names):
            out("\t%s" % name)
        return 0

    env_type = os.environ.get("CL_DEVICE_TYPE")
    dev_word = "Default"
    if env_type is not None:
        if env_type not in DEVICE_TYPES:
            out("Unknown CL_DEVICE_TYPE env variable setting: %s.\nAborting..."
                % env_type)
            sys.stdout.flush()
            os.abort()
        dev_word = DEVICE_TYPES[env_type]
    plat = int(os.environ.get("CL_PLATFORM_INDEX", "0") or 0)
    dev = int(os.environ.get("CL_DEVICE_INDEX", "0") or 0)

    selected = []
    for a in args:
        if a in options:
            continue
        if a == "all":
            selected = list(names)
            break
        if a.endswith("*"):
            hits = [n for n in names if n.startswith(a[:-1])]
        else:
            hits = [n for n in names if n == a]
        if not hits:
            out("ERROR: The argument '%s' did not match any test names." % a)
            return 1
        selected += hits
    if not selected:
        selected = list(names)
    selected = [n for n in names if n in selected]

    out(" Initializing random seed to 0.")
    out("Requesting %s device based on %s for platform index %d and device "
        "index %d" % (dev_word, "environment variable" if env_type is not None
                      else "command line", plat, dev))
    if plat >= int(spec.get("num_platforms", 1)):
        out("platform index out of range -- choosen_platform_index (%d) >= "
            "num_platforms (%d)" % (plat, int(spec.get("num_platforms", 1))))
        return 1
    out("Compute Device Name = Fake CTS device, Compute Device Vendor = "
        "cldmabuf, Compute Device Version = OpenCL 3.0 fake, CL C Version = "
        "OpenCL C 1.2 fake")
    out("Device latest conformance version passed: v0000-00-00-00")
    out("Supports single precision denormals: YES")
    out("sizeof( void*) = 8  (host)")
    out("sizeof( void*) = 8  (device)")

    init = spec.get("init", "ok")
    if isinstance(init, dict):
        init = init.get(mode, "ok")
    results = {}
    if init == "error":
        out("ERROR: clGetDeviceIDs failed! (CL_DEVICE_NOT_FOUND from "
            "fake_cts.py:1)")
        return 1
    if init in ("skip", "fail"):
        for n in selected:
            results[n] = "skip" if init == "skip" else "fail"
        save_json(argv[0], selected, results)
        out("Test %s while initialization"
            % ("skipped" if init == "skip" else "failed"))
        out("%s %d of %d tests." % ("SKIPPED" if init == "skip" else "FAILED",
                                    len(names), len(names)))
        return 0 if init == "skip" else 1

    passed = failed = 0
    for n in selected:
        b = behaviour(n)
        out("%s..." % n)
        sys.stdout.flush()          # the harness fflush()es here
        if b == "skip_version":
            out("%s skipped (requires at least OpenCL version 3.0, but the "
                "device reports OpenCL version 1.2)" % n)
            results[n] = "skip"
            continue
        out("Testing %s sub-case 1" % n)
        if b == "crash":
            out("about to dereference a bad pointer")   # lost: not flushed
            os.kill(os.getpid(), signal.SIGSEGV)
        if b == "abort":
            sys.stdout.flush()
            os._exit(3)
        if b == "timeout":
            time.sleep(float(spec.get("sleep", 3600)))
        if b == "pass":
            out("%s passed" % n)
            passed += 1
            results[n] = "pass"
        elif b == "fail":
            out("ERROR: clEnqueueReadBuffer failed! (CL_INVALID_VALUE from "
                "fake_cts.py:2)")
            out("%s FAILED" % n)
            failed += 1
            results[n] = "fail"
        elif b == "clfinish_fail":
            out("%s passed" % n)
            out("clFinish failed: CL_OUT_OF_RESOURCES")
            passed += 1
            failed += 1
            results[n] = "fail"
        elif b == "skip":
            out("%s test not supported" % n)
            results[n] = "skip"
        else:
            raise SystemExit("fake_cts: unknown behaviour %r" % b)

    print_results(failed, passed + failed, "sub-test")
    print_results(failed, passed + failed, "test")
    save_json(argv[0], selected, results)
    return 1 if any(r == "fail" for r in results.values()) else 0


def print_results(failed, count, what):
    count = max(count, failed)
    if failed == 0:
        if count > 1:
            out("PASSED %d of %d %ss." % (count, count, what))
        else:
            out("PASSED %s." % what)
    else:
        if count > 1:
            out("FAILED %d of %d %ss." % (failed, count, what))
        else:
            out("FAILED %s." % what)
    sys.stdout.flush()


def save_json(cmd, selected, results):
    path = os.environ.get("CL_CONFORMANCE_RESULTS_FILENAME")
    if not path:
        return
    lines = ",\n".join('\t\t"%s": "%s"' % (n, results.get(n, "pass"))
                       for n in selected)
    with open(path, "w", encoding="utf-8") as f:
        f.write('{\n\t"cmd": "%s",\n\t"args": "",\n\t"results": {\n%s\n\t}\n}\n'
                % (cmd, lines))
    out("Saving results to %s: success!" % path)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
