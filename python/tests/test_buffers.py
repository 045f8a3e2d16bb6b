"""import_buffer and acquired: bytes through a kernel, the fd's ownership, every refusal."""

import os
import stat
import tempfile

import pytest

from conftest import require

cl, np = require()

import cldmabuf  # noqa: E402
import dmabufs  # noqa: E402

mf = cl.mem_flags
N = 16384  # uint32 elements: 64 KiB


def _fill(fd, values):
    dmabufs.write(fd, values.astype(np.uint32).tobytes())


def _read_u32(fd, n):
    return np.frombuffer(dmabufs.read(fd, 4 * n), dtype=np.uint32)


def test_kernel_result_lands_in_the_dmabuf(ctx, queue, prg, source):
    fd = source.make(4 * N)
    try:
        _fill(fd, np.arange(N))
        buf = cldmabuf.import_buffer(ctx, fd, 4 * N)
        assert isinstance(buf, cl.Buffer) and buf.size == 4 * N
        with cldmabuf.acquired(queue, buf) as handoff:
            prg.affine(queue, (N,), None, buf, np.uint32(3), np.uint32(7))
        assert isinstance(handoff.acquire_event, cl.Event)
        handoff.release_event.wait()
        assert handoff.release_event.command_type == 0x2048  # CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR
        got = _read_u32(fd, N)
        np.testing.assert_array_equal(got, np.arange(N, dtype=np.uint32) * 3 + 7)
        buf.release()
    finally:
        os.close(fd)


def test_device_reads_what_the_cpu_wrote(ctx, queue, source):
    fd = source.make(4 * N)
    try:
        want = (np.arange(N, dtype=np.uint32) * 2654435761) & 0xFFFFFFFF
        _fill(fd, want)
        buf = cldmabuf.import_buffer(ctx, fd, None)  # the whole dma-buf
        assert buf.size == dmabufs.page_round(4 * N)
        got = np.empty(N, dtype=np.uint32)
        with cldmabuf.acquired(queue, buf):
            cl.enqueue_copy(queue, got, buf)
        queue.finish()
        np.testing.assert_array_equal(got, want)
        buf.release()
    finally:
        os.close(fd)


def test_caller_keeps_its_fd_and_may_close_it_at_once(ctx, queue, prg, source, no_fd_leak):
    with no_fd_leak():
        fd = source.make(4 * N)
        probe = os.dup(fd)  # the test's own view of the dma-buf
        _fill(fd, np.zeros(N))
        buf = cldmabuf.import_buffer(ctx, fd, 4 * N)
        os.close(fd)  # the import holds its own duplicate
        with cldmabuf.acquired(queue, buf) as handoff:
            prg.affine(queue, (N,), None, buf, np.uint32(1), np.uint32(5))
        handoff.release_event.wait()
        assert (_read_u32(probe, N) == 5).all()
        buf.release()
        os.close(probe)


def test_out_of_order_queue_releases_after_the_kernel(ctx, prg, source):
    try:
        queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    except cl.Error as e:
        pytest.skip("the device has no out-of-order queue: %s" % e)
    fd = source.make(4 * N)
    try:
        _fill(fd, np.arange(N))
        buf = cldmabuf.import_buffer(ctx, fd, 4 * N)
        with cldmabuf.acquired(queue, buf) as handoff:
            prg.affine(queue, (N,), None, buf, np.uint32(2), np.uint32(1),
                       wait_for=[handoff.acquire_event])
        handoff.release_event.wait()
        np.testing.assert_array_equal(_read_u32(fd, N), np.arange(N, dtype=np.uint32) * 2 + 1)
        buf.release()
    finally:
        os.close(fd)


def test_release_runs_when_the_block_raises(ctx, queue, source):
    fd = source.make(4096)
    try:
        buf = cldmabuf.import_buffer(ctx, fd, 4096)
        handoff = cldmabuf.acquired(queue, buf)
        with pytest.raises(ZeroDivisionError):
            with handoff:
                1 / 0
        assert handoff.release_event is not None
        handoff.release_event.wait()
        assert handoff.release_event.command_execution_status == cl.command_execution_status.COMPLETE
        buf.release()
    finally:
        os.close(fd)


def test_devices_list(ctx, queue, prg, source):
    fd = source.make(4 * N)
    try:
        _fill(fd, np.arange(N))
        buf = cldmabuf.import_buffer(ctx, fd, 4 * N, devices=ctx.devices)
        with cldmabuf.acquired(queue, buf) as handoff:
            prg.affine(queue, (N,), None, buf, np.uint32(1), np.uint32(1))
        handoff.release_event.wait()
        np.testing.assert_array_equal(_read_u32(fd, N), np.arange(N, dtype=np.uint32) + 1)
        buf.release()
    finally:
        os.close(fd)


def test_import_route(ctx, source):
    if not cldmabuf.layer_loaded(ctx.devices[0].platform):
        pytest.skip("the import route is the layer's query")
    fd = source.make(4096)
    try:
        buf = cldmabuf.import_buffer(ctx, fd, 4096)
        route = cldmabuf.import_route(buf)
        want = "copy" if os.environ.get("CLDMABUF_IMPORT") == "copy" else "host-ptr"
        if os.environ.get("CLDMABUF_IMPORT") in ("copy", "zero-copy"):
            assert route == want
        else:
            assert route in ("host-ptr", "copy")
        buf.release()
        plain = cl.Buffer(ctx, mf.READ_WRITE, 64)
        with pytest.raises(cldmabuf.Error) as e:
            cldmabuf.import_route(plain)
        assert e.value.code == -30
    finally:
        os.close(fd)


# ---- refusals: the right exception, the caller's fd untouched, no fd left behind --------------

def _assert_refused(excinfo, code, name, log_words=None):
    err = excinfo.value
    assert isinstance(err, cl.Error)  # pyopencl's own handlers catch it
    assert err.code == code and err.code_name == name
    assert name in str(err) and "(%d)" % code in str(err)
    if log_words and os.environ.get("CLDMABUF_LOG", "error") != "none":
        assert err.layer_log is not None and log_words in err.layer_log, err.layer_log
        assert err.layer_log in str(err)
    if not err.layer_log:
        assert "CLDMABUF_LOG=info" in str(err)


def _assert_still_open(fd):
    os.fstat(fd)  # raises if the import closed it


def test_pipe_is_refused(ctx, no_fd_leak):
    r, w = os.pipe()
    try:
        with no_fd_leak():
            with pytest.raises(cldmabuf.Error) as e:
                cldmabuf.import_buffer(ctx, r, 4096)
        _assert_refused(e, -64, "CL_INVALID_PROPERTY", "not a dma-buf")
        _assert_still_open(r)
    finally:
        os.close(r)
        os.close(w)


def test_regular_file_is_refused(ctx, no_fd_leak):
    with tempfile.TemporaryFile() as f:
        f.write(b"\0" * 8192)
        f.flush()
        with no_fd_leak():
            with pytest.raises(cldmabuf.Error) as e:
                cldmabuf.import_buffer(ctx, f.fileno(), 4096)
        _assert_refused(e, -64, "CL_INVALID_PROPERTY", "not a dma-buf")
        assert stat.S_ISREG(os.fstat(f.fileno()).st_mode)


def test_size_larger_than_the_dmabuf_is_refused(ctx, source, no_fd_leak):
    fd = source.make(4096)
    try:
        with no_fd_leak():
            with pytest.raises(cldmabuf.Error) as e:
                cldmabuf.import_buffer(ctx, fd, 8 * 4096)
        _assert_refused(e, -61, "CL_INVALID_BUFFER_SIZE", "larger than the dma-buf")
        _assert_still_open(fd)
    finally:
        os.close(fd)


def test_closed_fd_raises_oserror(ctx, source, no_fd_leak):
    fd = source.make(4096)
    os.close(fd)
    with no_fd_leak():
        with pytest.raises(OSError) as e:
            cldmabuf.import_buffer(ctx, fd, 4096)
    assert e.value.errno == 9  # EBADF


@pytest.mark.parametrize("flags", [mf.READ_WRITE | mf.USE_HOST_PTR, mf.READ_WRITE | mf.COPY_HOST_PTR,
                                   mf.READ_WRITE | mf.ALLOC_HOST_PTR, mf.READ_ONLY | mf.WRITE_ONLY])
def test_wrong_flags_are_refused(ctx, source, no_fd_leak, flags):
    fd = source.make(4096)
    try:
        with no_fd_leak():
            with pytest.raises(cldmabuf.Error) as e:
                cldmabuf.import_buffer(ctx, fd, 4096, flags=flags)
        _assert_refused(e, -30, "CL_INVALID_VALUE")
        _assert_still_open(fd)
    finally:
        os.close(fd)


def test_acquire_of_a_plain_buffer_is_refused(ctx, queue):
    plain = cl.Buffer(ctx, mf.READ_WRITE, 64)
    with pytest.raises(cldmabuf.Error) as e:
        cldmabuf.enqueue_acquire(queue, [plain])
    _assert_refused(e, -38, "CL_INVALID_MEM_OBJECT", "not an imported external memory object")
    assert e.value.routine == "clEnqueueAcquireExternalMemObjectsKHR"


def test_refusals_leave_nothing_after_many(ctx, source, no_fd_leak):
    # A leak of one fd per refused call would show here even where the
    # fd-number reuse hides it in a single call.
    fd = source.make(4096)
    try:
        with no_fd_leak():
            for _ in range(50):
                with pytest.raises(cldmabuf.Error):
                    cldmabuf.import_buffer(ctx, fd, 1 << 20)
    finally:
        os.close(fd)


def test_successful_imports_close_their_duplicates(ctx, source, no_fd_leak):
    fd = source.make(4096)
    try:
        with no_fd_leak():
            bufs = [cldmabuf.import_buffer(ctx, fd, 4096) for _ in range(8)]
            for b in bufs:
                b.release()
    finally:
        os.close(fd)
