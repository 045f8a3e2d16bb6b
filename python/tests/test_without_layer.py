"""The package without the layer, in a child process (the loader reads OPENCL_LAYERS once)."""

import json
import os
import subprocess
import sys

import pytest

from conftest import require

require()

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import json, os, sys
sys.path.insert(0, %(here)r)
import pyopencl as cl
import cldmabuf, dmabufs
want = os.environ.get("CLDMABUF_TEST_PLATFORM", "")
platform = [p for p in cl.get_platforms() if want in p.name and p.get_devices()][0]
device = platform.get_devices()[0]
ctx = cl.Context([device])
source = dmabufs.Source()
fd = source.make(4096)
before = dmabufs.open_fds()
fmt = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.UNSIGNED_INT8)
calls = {
    "buffer": lambda: cldmabuf.import_buffer(ctx, fd, 4096),
    "image": lambda: cldmabuf.import_image(ctx, fd, fmt, (16, 16)),
    "plane offset": lambda: cldmabuf.import_image(ctx, fd, fmt, (16, 8), planes=[(2048, 64)]),
    "allocate": lambda: cldmabuf.allocate(ctx, 4096)[0],
    "semaphore": lambda: cldmabuf.create_semaphore(ctx),
}
result = {"layer": cldmabuf.layer_loaded(platform),
          "native": "cl_khr_external_memory_dma_buf" in device.extensions.split(),
          "native_sync_fd": "cl_khr_external_semaphore_sync_fd" in device.extensions.split()}
for name, call in calls.items():
    try:
        call().release()
        result[name] = "ok"
    except cldmabuf.NotSupportedError as e:
        result[name] = "NotSupportedError: %%s" %% e
    except Exception as e:
        result[name] = "%%s: %%s" %% (type(e).__name__, e)
result["leaked"] = sorted(dmabufs.open_fds() - before)
print(json.dumps(result))
"""


@pytest.mark.parametrize("layers", [None, "/nonexistent/libcldmabuf.so"])
def test_without_the_layer(layers):
    env = dict(os.environ)
    env.pop("OPENCL_LAYERS", None)
    if layers:
        env["OPENCL_LAYERS"] = layers
    # close_fds=False: the child of subprocess is a vfork child, whose
    # close_range() runs the virtual Gen9's hook in this process's memory and
    # would drop this process's render node from the model's fd table.  The
    # fds here are close-on-exec anyway.
    out = subprocess.run([sys.executable, "-c", CHILD % {"here": HERE}], env=env,
                         capture_output=True, text=True, timeout=300, close_fds=False)
    if out.returncode != 0 and "no dma-buf source" in out.stderr:
        pytest.skip("no dma-buf source")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["layer"] is False
    assert r["leaked"] == []
    if r["native"]:
        # An implementation with its own import: used as it is; the layer's
        # additions say that they need the layer.
        assert r["buffer"] == "ok" and r["image"] == "ok"
        for name in ("plane offset", "allocate"):
            assert r[name].startswith("NotSupportedError") and "layer" in r[name], r[name]
    else:
        for name in ("buffer", "image", "plane offset", "allocate"):
            msg = r[name]
            assert msg.startswith("NotSupportedError: "), msg
            assert "cl_khr_external_memory_dma_buf" in msg
            assert "neither the cldmabuf layer nor the OpenCL implementation" in msg
            assert "OPENCL_LAYERS=" in msg and "pkg-config --variable=layer cldmabuf" in msg
            if layers:
                assert "OPENCL_LAYERS=%s is set but the layer is not loaded" % layers in msg
    if not r["native_sync_fd"]:
        assert r["semaphore"].startswith("NotSupportedError: ")
        assert "cl_khr_external_semaphore_sync_fd" in r["semaphore"]
