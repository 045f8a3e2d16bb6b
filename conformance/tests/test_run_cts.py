"""Tests of conformance/run-cts against stand-in CTS binaries (fake_cts.py).

Run: python3 -m unittest discover -s conformance/tests -v
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONF = HERE.parent
RUN_CTS = CONF / "run-cts"
FAKE = CONF / "fake-cts" / "fake_cts.py"


def run_cts_module():
    """run-cts imported as a module (it has no .py suffix)."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("run_cts", str(RUN_CTS))
    spec = importlib.util.spec_from_loader("run_cts", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


class RunCtsCase(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="run-cts-test-"))
        self.cts = self.tmp / "cts"
        self.out = self.tmp / "out"
        self.layer = self.tmp / "libcldmabuf.so"
        self.layer.write_bytes(b"not really a layer\n")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def install(self, name, tests, subdir="test_conformance/x", **extra):
        d = self.cts / subdir
        d.mkdir(parents=True, exist_ok=True)
        exe = d / name
        shutil.copy(FAKE, exe)
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP
                  | stat.S_IXOTH)
        spec = dict(tests=tests, **extra)
        (d / (name + ".json")).write_text(json.dumps(spec))
        return exe

    def run_cts(self, *args, env=None):
        cmd = [sys.executable, str(RUN_CTS), "--cts-dir", str(self.cts),
               "--layer", str(self.layer), "--out", str(self.out),
               "--no-clinfo"] + list(args)
        e = dict(os.environ)
        e.pop("OPENCL_LAYERS", None)
        e.update(env or {})
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=e, timeout=120)
        self.stderr = p.stderr.decode()
        report = None
        if (self.out / "report.json").exists():
            report = json.loads((self.out / "report.json").read_text())
        md = (self.out / "report.md").read_text() \
            if (self.out / "report.md").exists() else ""
        return p.returncode, report, md

    @staticmethod
    def suite(report, label):
        for s in report["suites"]:
            if s["label"] == label:
                return s
        raise KeyError(label)


class TestScenarios(RunCtsCase):
    def test_no_difference_exit_0(self):
        self.install("test_buffers", {"buffer_read_int": "pass",
                                      "buffer_write_int": "pass",
                                      "buffer_fill": "skip"})
        rc, rep, md = self.run_cts("--suites", "test_buffers")
        self.assertEqual(rc, 0, self.stderr)
        s = self.suite(rep, "test_buffers")
        self.assertEqual(s["tests"]["buffer_read_int"],
                         {"without": "pass", "with": "pass",
                          "time_without": s["tests"]["buffer_read_int"][
                              "time_without"],
                          "time_with": s["tests"]["buffer_read_int"][
                              "time_with"],
                          "difference": ""})
        self.assertEqual(s["tests"]["buffer_fill"]["without"], "skip")
        self.assertEqual(rep["regressions"], [])
        self.assertEqual(rep["exit_status"], 0)
        self.assertIn("no regression", md)
        self.assertIn("| test_buffers | buffer_read_int | pass |", md)
        self.assertEqual(s["runs"]["without"]["exit_code"], 0)
        self.assertTrue(s["runs"]["with"]["harness_json"])
        self.assertGreaterEqual(s["runs"]["with"]["wall"], 0)
        self.assertIsNotNone(s["tests"]["buffer_read_int"]["time_with"])

    def test_pass_to_fail_is_regression(self):
        self.install("test_buffers", {
            "buffer_read_int": "pass",
            "buffer_write_int": {"without": "pass", "with": "fail"}})
        rc, rep, md = self.run_cts("--suites", "test_buffers")
        self.assertEqual(rc, 1, self.stderr)
        t = self.suite(rep, "test_buffers")["tests"]
        self.assertEqual((t["buffer_write_int"]["without"],
                          t["buffer_write_int"]["with"]), ("pass", "fail"))
        self.assertEqual(t["buffer_write_int"]["difference"], "REGRESSION")
        self.assertEqual(t["buffer_read_int"]["difference"], "")
        self.assertEqual(len(rep["regressions"]), 1)
        self.assertIn("**REGRESSION**", md)
        self.assertIn("buffer_write_int", md.split("## Regressions")[1])

    def test_fail_in_both_is_not_an_error(self):
        self.install("test_api", {"api_a": "pass", "api_b": "fail"})
        rc, rep, md = self.run_cts("--suites", "test_api")
        self.assertEqual(rc, 0, self.stderr)
        t = self.suite(rep, "test_api")["tests"]
        self.assertEqual((t["api_b"]["without"], t["api_b"]["with"]),
                         ("fail", "fail"))
        self.assertEqual(t["api_b"]["difference"], "")
        self.assertEqual(self.suite(rep, "test_api")["runs"]["with"][
            "exit_code"], 1)

    def test_improvement_and_change_are_marked_not_fatal(self):
        self.install("test_cl_khr_external_memory_dma_buf", {
            "external_memory_dma_buf": {"without": "skip", "with": "pass"},
            "other": {"without": "fail", "with": "skip"}})
        rc, rep, md = self.run_cts(
            "--suites", "test_cl_khr_external_memory_dma_buf")
        self.assertEqual(rc, 0, self.stderr)
        t = self.suite(rep, "test_cl_khr_external_memory_dma_buf")["tests"]
        self.assertEqual(t["external_memory_dma_buf"]["difference"],
                         "improved")
        self.assertEqual(t["other"]["difference"], "changed")
        self.assertIn("| **skip** |", md)

    def test_crash_with_layer(self):
        self.install("test_events", {
            "event_a": "pass",
            "event_b": {"without": "pass", "with": "crash"},
            "event_c": "pass"})
        rc, rep, md = self.run_cts("--suites", "test_events")
        self.assertEqual(rc, 1, self.stderr)
        s = self.suite(rep, "test_events")
        t = s["tests"]
        self.assertEqual(t["event_a"]["with"], "pass")
        self.assertEqual(t["event_b"]["with"], "crash")
        self.assertEqual(t["event_c"]["with"], "not-run")
        self.assertEqual(t["event_b"]["difference"], "REGRESSION")
        self.assertEqual(t["event_c"]["difference"], "REGRESSION")
        self.assertEqual(s["runs"]["with"]["signal"], "SIGSEGV")
        self.assertFalse(s["runs"]["with"]["harness_json"])
        self.assertIn("SIGSEGV", md)

    def test_exit_mid_test_is_crash(self):
        self.install("test_events", {
            "event_a": {"without": "pass", "with": "abort"},
            "event_b": "pass"})
        rc, rep, _ = self.run_cts("--suites", "test_events")
        self.assertEqual(rc, 1)
        t = self.suite(rep, "test_events")["tests"]
        self.assertEqual(t["event_a"]["with"], "crash")
        self.assertEqual(t["event_b"]["with"], "not-run")
        self.assertEqual(self.suite(rep, "test_events")["runs"]["with"][
            "exit_code"], 3)

    def test_timeout_with_layer(self):
        self.install("test_computeinfo", {
            "computeinfo": "pass",
            "extended_versioning": {"without": "pass", "with": "timeout"}},
            sleep=60)
        rc, rep, md = self.run_cts("--suites", "test_computeinfo",
                                   "--timeout", "3")
        self.assertEqual(rc, 1, self.stderr)
        s = self.suite(rep, "test_computeinfo")
        self.assertEqual(s["tests"]["extended_versioning"]["with"], "timeout")
        self.assertEqual(s["tests"]["extended_versioning"]["without"], "pass")
        self.assertEqual(s["tests"]["computeinfo"]["with"], "pass")
        self.assertTrue(s["runs"]["with"]["timed_out"])
        self.assertFalse(s["runs"]["without"]["timed_out"])
        self.assertLess(s["runs"]["with"]["wall"], 30)
        self.assertIn("timed out", md)

    def test_crash_in_both_is_not_a_regression(self):
        self.install("test_api", {"a": "pass", "b": "crash"})
        rc, rep, _ = self.run_cts("--suites", "test_api")
        self.assertEqual(rc, 0)
        t = self.suite(rep, "test_api")["tests"]
        self.assertEqual((t["b"]["without"], t["b"]["with"]),
                         ("crash", "crash"))

    def test_skip_formats_and_clfinish(self):
        self.install("test_basic", {"v": "skip_version", "s": "skip",
                                    "f": "clfinish_fail", "p": "pass"})
        rc, rep, _ = self.run_cts("--suites", "test_basic",
                                  "--tests", "test_basic:all")
        self.assertEqual(rc, 0)
        t = self.suite(rep, "test_basic")["tests"]
        self.assertEqual({k: v["without"] for k, v in t.items()},
                         {"v": "skip", "s": "skip", "f": "fail", "p": "pass"})

    def test_init_skip_and_init_failure(self):
        self.install("test_cl_khr_external_memory_dma_buf",
                     {"external_memory_dma_buf": "pass"},
                     init={"without": "skip", "with": "ok"})
        self.install("test_mem_host_flags", {"mem_host_read_only": "pass"},
                     subdir="y", init={"without": "ok", "with": "fail"})
        rc, rep, _ = self.run_cts(
            "--suites", "test_cl_khr_external_memory_dma_buf,"
            "test_mem_host_flags")
        self.assertEqual(rc, 1)
        t = self.suite(rep, "test_cl_khr_external_memory_dma_buf")["tests"]
        self.assertEqual((t["external_memory_dma_buf"]["without"],
                          t["external_memory_dma_buf"]["with"]),
                         ("skip", "pass"))
        t = self.suite(rep, "test_mem_host_flags")["tests"]
        self.assertEqual((t["mem_host_read_only"]["without"],
                          t["mem_host_read_only"]["with"]), ("pass", "fail"))

    def test_startup_error_with_layer(self):
        self.install("test_buffers", {"a": "pass"},
                     init={"without": "ok", "with": "error"})
        rc, rep, md = self.run_cts("--suites", "test_buffers")
        self.assertEqual(rc, 1)
        s = self.suite(rep, "test_buffers")
        self.assertEqual(s["tests"]["a"]["with"], "not-run")
        self.assertIn("before any test", s["runs"]["with"]["suite_error"])


class TestSelectionAndEnvironment(RunCtsCase):
    def test_tests_selection_and_exclusion(self):
        # test_api's table entry excludes set_command_queue_property.
        self.install("test_api", {"a": "pass", "b": "pass",
                                  "set_command_queue_property": "crash"})
        rc, rep, _ = self.run_cts("--suites", "test_api")
        self.assertEqual(rc, 0, self.stderr)
        s = self.suite(rep, "test_api")
        self.assertEqual(sorted(s["tests"]), ["a", "b"])
        self.assertNotIn("set_command_queue_property",
                         s["runs"]["without"]["cmd"])
        rc, rep, _ = self.run_cts("--suites", "test_api",
                                  "--tests", "test_api:b")
        s = self.suite(rep, "test_api")
        self.assertEqual(list(s["tests"]), ["b"])

    def test_image_table_args_and_label_selection(self):
        opts = ["small_images", "CL_FILTER_NEAREST"]
        self.install("test_image_streams", {"1D": "pass", "2D": "pass",
                                            "3D": "fail"},
                     subdir="test_conformance/images/kernel_read_write",
                     options=opts)
        self.install("test_cl_copy_images", {"1D": "pass", "2D": "pass"},
                     subdir="test_conformance/images/clCopyImage")
        rc, rep, md = self.run_cts(
            "--suites", "test_images",
            "--tests", "test_cl_copy_images:2D:1D,2D")
        self.assertEqual(rc, 0, self.stderr)
        s = self.suite(rep, "test_image_streams:2D")
        self.assertEqual(s["runs"]["with"]["cmd"][-3:],
                         ["small_images", "CL_FILTER_NEAREST", "2D"])
        self.assertEqual(list(s["tests"]), ["2D"])
        s = self.suite(rep, "test_cl_copy_images:2D")
        self.assertEqual(sorted(s["tests"]), ["1D", "2D"])
        self.assertTrue(self.suite(rep, "test_cl_get_info")["missing"])
        self.assertIn("not found", md)

    def test_tcg_subsets_and_override(self):
        # --tcg narrows test_basic to its short list; --tests still wins.
        subset = run_cts_module().TCG_SUBSETS["test_basic"]
        self.install("test_basic", dict({n: "pass" for n in subset},
                                        hostptr="fail"))
        rc, rep, _ = self.run_cts("--suites", "test_basic", "--tcg")
        self.assertEqual(rc, 0, self.stderr)
        s = self.suite(rep, "test_basic")
        self.assertEqual(s["selected"], subset)
        self.assertEqual(sorted(s["tests"]), sorted(subset))
        self.assertEqual(s["tests"]["arraycopy"]["with"], "pass")
        rc, rep, _ = self.run_cts("--suites", "test_basic", "--tcg",
                                  "--tests", "test_basic:hostptr")
        self.assertEqual(list(self.suite(rep, "test_basic")["tests"]),
                         ["hostptr"])

    def test_env_exported_and_layer_only_in_second_run(self):
        self.install("test_events", {"a": "pass"})
        rc, rep, _ = self.run_cts("--suites", "test_events",
                                  "--platform-index", "0",
                                  "--device-type", "cpu",
                                  env={"OPENCL_LAYERS": "/bogus.so"})
        self.assertEqual(rc, 0, self.stderr)
        logs = self.out / "logs"
        wo = (logs / "test_events.without.log").read_text()
        wi = (logs / "test_events.with.log").read_text()
        self.assertIn("Requesting CPU device based on environment variable "
                      "for platform index 0", wo)
        self.assertIn("Requesting CPU device", wi)
        self.assertEqual(rep["environment"]["env"]["CL_DEVICE_TYPE"], "cpu")
        self.assertEqual(rep["environment"]["env"]["CL_PLATFORM_INDEX"], "0")
        self.assertTrue(rep["environment"]["layer_exists"])
        self.assertEqual(len(rep["environment"]["layer_sha256"]), 64)

    def test_platform_out_of_range_is_suite_error(self):
        self.install("test_events", {"a": "pass"})
        rc, rep, _ = self.run_cts("--suites", "test_events",
                                  "--platform-index", "3")
        self.assertEqual(rc, 0)
        s = self.suite(rep, "test_events")
        self.assertEqual(s["tests"]["a"]["without"], "not-run")
        self.assertIn("exit 1", s["runs"]["without"]["suite_error"])

    def test_suite_without_tests_gets_pseudo_test(self):
        self.install("test_gl", {})
        rc, rep, _ = self.run_cts("--suites", "test_gl")
        self.assertEqual(rc, 0, self.stderr)
        t = self.suite(rep, "test_gl")["tests"]
        self.assertEqual(t["(suite)"]["without"], "skip")

    def test_nothing_found_is_exit_2(self):
        self.cts.mkdir()
        rc, rep, md = self.run_cts("--suites", "test_buffers")
        self.assertEqual(rc, 2)
        self.assertTrue(self.suite(rep, "test_buffers")["missing"])

    def test_missing_layer_is_reported(self):
        self.install("test_events", {"a": "pass"})
        self.layer.unlink()
        rc, rep, md = self.run_cts("--suites", "test_events")
        self.assertEqual(rc, 0)
        self.assertFalse(rep["environment"]["layer_exists"])
        self.assertIn("does not exist", md)
        self.assertIn("does not exist", self.stderr)

    def test_git_commit_of_cts_dir(self):
        if not shutil.which("git"):
            self.skipTest("no git")
        self.install("test_events", {"a": "pass"})
        g = ["git", "-C", str(self.cts), "-c", "user.name=t",
             "-c", "user.email=t@t"]
        subprocess.run(g + ["init", "-q"], check=True)
        subprocess.run(g + ["add", "-A"], check=True)
        subprocess.run(g + ["commit", "-qm", "cts"], check=True)
        head = subprocess.run(g + ["rev-parse", "HEAD"], check=True,
                              stdout=subprocess.PIPE).stdout.decode().strip()
        rc, rep, md = self.run_cts("--suites", "test_events")
        self.assertEqual(rep["environment"]["cts_git"]["commit"], head)
        self.assertIn(head, md)

    def test_cts_commit_option(self):
        self.install("test_events", {"a": "pass"})
        rc, rep, md = self.run_cts("--suites", "test_events",
                                   "--cts-commit", "b8f8906c")
        self.assertEqual(rep["environment"]["cts_git"]["commit"], "b8f8906c")
        self.assertIn("`b8f8906c`", md)


if __name__ == "__main__":
    unittest.main()
