"""The package as installed or from the tree, and the camera example's way out."""

import os
import subprocess
import sys

import pytest

from conftest import require

cl, _ = require()

import cldmabuf  # noqa: E402

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python", "camera_to_cl.py")


def test_version_is_the_projects():
    want = os.environ.get("CLDMABUF_VERSION")
    if not want:
        pytest.skip("CLDMABUF_VERSION not set (meson test sets it from meson.build)")
    assert cldmabuf.__version__ == want


def test_errors_are_pyopencl_errors():
    assert issubclass(cldmabuf.Error, cl.Error)
    e = cldmabuf.Error("clCreateBufferWithProperties", -64, "cldmabuf: error: import refused: x")
    assert (e.code, e.code_name, e.routine) == (-64, "CL_INVALID_PROPERTY", "clCreateBufferWithProperties")
    assert str(e) == ("clCreateBufferWithProperties failed: CL_INVALID_PROPERTY (-64); the layer said: "
                      "cldmabuf: error: import refused: x")
    assert "CLDMABUF_LOG=info" in str(cldmabuf.Error("clEnqueueAcquireExternalMemObjectsKHR", -1142))
    assert "CL_INVALID_SEMAPHORE_KHR (-1142)" in str(cldmabuf.Error("x", -1142))


def test_log_capture_can_be_turned_off(ctx):
    r, w = os.pipe()
    try:
        cldmabuf.set_log_capture(False)
        with pytest.raises(cldmabuf.Error) as e:
            cldmabuf.import_buffer(ctx, r, 4096)
        assert e.value.layer_log is None and "CLDMABUF_LOG=info" in str(e.value)
    finally:
        cldmabuf.set_log_capture(True)
        os.close(r)
        os.close(w)


def test_example_without_a_camera():
    if not os.path.exists(EXAMPLE):
        pytest.skip("examples/python is not beside this test (an installed package)")
    out = subprocess.run([sys.executable, EXAMPLE, "/dev/nonexistent-video0"], capture_output=True,
                         text=True, timeout=120, close_fds=False)  # see test_without_layer.py
    assert out.returncode == 2, out
    assert "no V4L2 camera at /dev/nonexistent-video0" in out.stderr
    assert "Traceback" not in out.stderr
