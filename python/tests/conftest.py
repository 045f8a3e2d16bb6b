"""Fixtures: an OpenCL context on the platform under test and a dma-buf source.

Environment (as the C++ suites read it): ``CLDMABUF_TEST_PLATFORM`` (a part
of the platform's name; default: the first platform), ``CLDMABUF_TEST_DMABUF``
(heap, udmabuf, vgem, sim; default: the first this machine has).
"""

import contextlib
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import dmabufs  # noqa: E402

# Without pyopencl or numpy every test module skips itself (require(), at its
# top), so the fixtures below are never asked for.
try:
    import numpy as np
    import pyopencl as cl

    import cldmabuf
except ImportError:
    pass


def require():
    """(pyopencl, numpy) for a test module, which is skipped with the reason when one is missing."""
    return (pytest.importorskip("pyopencl", reason="pyopencl is not installed (Debian: python3-pyopencl)"),
            pytest.importorskip("numpy", reason="numpy is not installed (Debian: python3-numpy)"))

KERNELS = r"""
__kernel void affine(__global uint *x, uint a, uint b) {
    size_t i = get_global_id(0);
    x[i] = x[i] * a + b;
}
__kernel void read_ui(__read_only image2d_t img, __global uint4 *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * get_global_size(0) + x] = read_imageui(img, (int2)(x, y));
}
__kernel void read_f(__read_only image2d_t img, __global float4 *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * get_global_size(0) + x] = read_imagef(img, (int2)(x, y));
}
__kernel void write_ui(__write_only image2d_t img) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imageui(img, (int2)(x, y), (uint4)(x, y, x ^ y, 200));
}
"""


def _pick_platform():
    want = os.environ.get("CLDMABUF_TEST_PLATFORM", "")
    for p in cl.get_platforms():
        if want in p.name and p.get_devices():
            return p
    return None


@pytest.fixture(scope="session")
def platform():
    p = _pick_platform()
    if p is None:
        pytest.skip("no OpenCL platform%s with a device" % (
            " named like %r" % os.environ["CLDMABUF_TEST_PLATFORM"]
            if os.environ.get("CLDMABUF_TEST_PLATFORM") else ""))
    return p


@pytest.fixture(scope="session")
def source():
    s = dmabufs.Source()
    if s.kind is None:
        pytest.skip("no dma-buf source here (CLDMABUF_TEST_DMABUF=%s; none of /dev/dma_heap/system, "
                    "/dev/udmabuf, vgem, the virtual Gen9 preloaded)"
                    % os.environ.get("CLDMABUF_TEST_DMABUF", "unset"))
    return s


@pytest.fixture(scope="session")
def ctx(platform, source):
    if not cldmabuf.layer_loaded(platform) and "cl_khr_external_memory_dma_buf" not in \
            platform.get_devices()[0].extensions:
        pytest.fail("platform %r imports no dma-bufs: run with OPENCL_LAYERS=.../libcldmabuf.so"
                    % platform.name)
    context = cl.Context([platform.get_devices()[0]])
    queue = cl.CommandQueue(context)
    # One import, kernel, image and handoff before any fd is counted: the
    # layer's one-time probes and the ICD's compiler keep files open for the
    # process's life.
    prg = cl.Program(context, KERNELS).build()
    fd = source.make(4096)
    try:
        buf = cldmabuf.import_buffer(context, fd, 4096)
        img = cldmabuf.import_image(context, fd, cl.ImageFormat(cl.channel_order.RGBA,
                                                                cl.channel_type.UNSIGNED_INT8), (16, 16))
        out = cl.Buffer(context, cl.mem_flags.WRITE_ONLY, 16 * 16 * 16)
        with cldmabuf.acquired(queue, buf, img) as h:
            prg.affine(queue, (1024,), None, buf, np.uint32(1), np.uint32(0))
            prg.read_ui(queue, (16, 16), None, img, out)
        h.release_event.wait()
        buf.release()
        img.release()
    finally:
        os.close(fd)
    try:
        b, fd = cldmabuf.allocate(context, 4096)
        b.release()
        os.close(fd)
    except (cldmabuf.Error, cldmabuf.NotSupportedError):
        pass
    try:
        sema = cldmabuf.create_semaphore(context, exportable=True)
        cldmabuf.enqueue_signal_semaphores(queue, sema)
        os.close(sema.export_sync_fd())
        queue.finish()
        sema.release()
    except (cldmabuf.Error, cldmabuf.NotSupportedError):
        pass
    context.test_queue = queue
    context.test_program = prg
    return context


@pytest.fixture
def queue(ctx):
    return ctx.test_queue


@pytest.fixture
def prg(ctx):
    return ctx.test_program


def settle_fds(before, timeout=3.0):
    """The open fds once none is new since ``before``, or after ``timeout``.

    The layer closes an import's fds on its own threads, after the release.
    """
    deadline = time.monotonic() + timeout
    while True:
        now = dmabufs.open_fds()
        if not now - before or time.monotonic() > deadline:
            return now
        time.sleep(0.02)


@pytest.fixture
def no_fd_leak():
    """Fails the test when it leaves an fd open that was not open before it."""
    @contextlib.contextmanager
    def check():
        before = dmabufs.open_fds()
        yield
        after = settle_fds(before)
        assert after - before == set(), "fds left open: %s" % sorted(
            (fd, os.readlink("/proc/self/fd/%d" % fd)) for fd in after - before)
    return check
