"""allocate: the layer's allocator and the exported fd."""

import os

import pytest

from conftest import require

cl, np = require()

import cldmabuf  # noqa: E402
import dmabufs  # noqa: E402

mf = cl.mem_flags
N = 4096


@pytest.fixture
def layer(ctx):
    if not cldmabuf.layer_loaded(ctx.devices[0].platform):
        pytest.skip("the allocator is the layer's")


def _allocate_or_skip(ctx, size):
    try:
        return cldmabuf.allocate(ctx, size)
    except cldmabuf.Error as e:
        if e.code == -59:  # CL_INVALID_OPERATION: no exporter on this machine
            pytest.skip("no dma-buf exporter for the allocator here: %s" % e)
        raise


def test_allocated_buffer_and_its_fd(ctx, queue, prg, layer, no_fd_leak):
    with no_fd_leak():
        buf, fd = _allocate_or_skip(ctx, 4 * N)
        try:
            assert isinstance(buf, cl.Buffer) and buf.size == 4 * N
            name = cldmabuf.exporter(buf)
            assert name in ("i915", "dma-heap", "udmabuf")
            # The kernel sees what the CPU wrote through the exported fd, and
            # the fd sees what the kernel wrote.
            dmabufs.write(fd, np.arange(N, dtype=np.uint32).tobytes())
            with cldmabuf.acquired(queue, buf) as handoff:
                prg.affine(queue, (N,), None, buf, np.uint32(5), np.uint32(3))
            handoff.release_event.wait()
            got = np.frombuffer(dmabufs.read(fd, 4 * N), dtype=np.uint32)
            np.testing.assert_array_equal(got, np.arange(N, dtype=np.uint32) * 5 + 3)
            # The fd is a dma-buf of the exporter the layer names.
            assert dmabufs.exporter_name(fd) == {"i915": "i915", "dma-heap": "system",
                                                 "udmabuf": "udmabuf"}[name]
            # It can be imported again, as any other dma-buf.
            again = cldmabuf.import_buffer(ctx, fd, 4 * N)
            with cldmabuf.acquired(queue, again):
                out = np.empty(N, dtype=np.uint32)
                cl.enqueue_copy(queue, out, again)
            queue.finish()
            np.testing.assert_array_equal(out, got)
            again.release()
        finally:
            buf.release()
            os.close(fd)


def test_fd_outlives_the_buffer(ctx, layer):
    buf, fd = _allocate_or_skip(ctx, 4096)
    try:
        dmabufs.write(fd, b"\x5a" * 4096)
        buf.release()
        assert dmabufs.read(fd, 4096) == b"\x5a" * 4096
    finally:
        os.close(fd)


@pytest.mark.parametrize("size,flags,code", [
    (0, mf.READ_WRITE, -61),                       # CL_INVALID_BUFFER_SIZE
    (4096, mf.READ_WRITE | mf.USE_HOST_PTR, -30),  # CL_INVALID_VALUE (host-pointer flags)
    (4096, mf.READ_WRITE | mf.ALLOC_HOST_PTR, -30),
])
def test_allocation_refusals(ctx, layer, no_fd_leak, size, flags, code):
    with no_fd_leak():
        with pytest.raises(cldmabuf.Error) as e:
            cldmabuf.allocate(ctx, size, flags=flags)
    assert e.value.code == code
    assert e.value.routine == "clCreateBufferWithProperties"


def test_unknown_exporter_name(ctx):
    with pytest.raises(ValueError):
        cldmabuf.allocate(ctx, 4096, exporter="ion")
