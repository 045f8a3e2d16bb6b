"""Semaphores with sync_fd: export a signal, import it, and the refusals."""

import os
import select

import pytest

from conftest import require

cl, _ = require()

import cldmabuf  # noqa: E402
import dmabufs  # noqa: E402


@pytest.fixture
def sync_fd(ctx):
    if "cl_khr_external_semaphore_sync_fd" not in ctx.devices[0].extensions:
        pytest.skip("no cl_khr_external_semaphore_sync_fd here")


def _exportable(ctx):
    try:
        return cldmabuf.create_semaphore(ctx, exportable=True)
    except cldmabuf.Error as e:
        if e.code == -33:  # CL_INVALID_DEVICE: no fence source (sw_sync, vgem) for an export
            pytest.skip("no sync_fd export here: %s" % e)
        raise


def _poll(fd, timeout_ms):
    p = select.poll()
    p.register(fd, select.POLLIN)
    return bool(p.poll(timeout_ms))


def test_exported_signal_orders_a_second_queue(ctx, queue, prg, sync_fd, source, no_fd_leak):
    # Queue A: a user event holds the signal; the exported sync_file stays
    # pending until the event completes.  Queue B waits on the imported
    # sync_file before the kernel that reads the buffer queue A wrote.
    with no_fd_leak():
        sema = _exportable(ctx)
        gate = cl.UserEvent(ctx)
        signal = cldmabuf.enqueue_signal_semaphores(queue, sema, wait_for=[gate])
        fd = cldmabuf.export_sync_fd(sema)
        assert not _poll(fd, 50), "the sync_file signalled before its signal ran"
        gate.set_status(cl.command_execution_status.COMPLETE)
        signal.wait()
        assert _poll(fd, 5000), "the sync_file did not signal"

        queue_b = cl.CommandQueue(ctx)
        waiter = cldmabuf.semaphore_from_sync_fd(ctx, fd)
        os.close(fd)  # the semaphore holds its own duplicate
        wait = cldmabuf.enqueue_wait_semaphores(queue_b, [waiter])
        wait.wait()
        assert wait.command_execution_status == cl.command_execution_status.COMPLETE
        queue_b.finish()
        waiter.release()
        sema.release()


def test_a_dmabufs_fences_as_a_semaphore(ctx, queue, sync_fd, source, no_fd_leak):
    fd = source.make(4096)
    try:
        try:
            fence = dmabufs.export_sync_file(fd)
        except OSError as e:
            pytest.skip("DMA_BUF_IOCTL_EXPORT_SYNC_FILE: %s (Linux < 6.0?)" % e)
        with no_fd_leak():
            with cldmabuf.semaphore_from_sync_fd(ctx, fence) as sema:
                cldmabuf.enqueue_wait_semaphores(queue, sema).wait()
        os.close(fence)
    finally:
        os.close(fd)


def test_payload_and_export_without_a_signal(ctx, queue, sync_fd, no_fd_leak):
    with no_fd_leak():
        sema = _exportable(ctx)
        assert sema.payload == 0
        with pytest.raises(cldmabuf.Error) as e:
            cldmabuf.export_sync_fd(sema)
        assert e.value.code == -59 and e.value.code_name == "CL_INVALID_OPERATION"
        assert e.value.routine == "clGetSemaphoreHandleForTypeKHR"
        cldmabuf.enqueue_signal_semaphores(queue, sema).wait()
        assert sema.payload == 1
        cldmabuf.enqueue_wait_semaphores(queue, sema).wait()
        assert sema.payload == 0
        sema.release()


def test_not_a_sync_file_is_refused(ctx, source, sync_fd, no_fd_leak):
    r, w = os.pipe()
    dmabuf = source.make(4096)
    try:
        for fd in (r, dmabuf):
            with no_fd_leak():
                with pytest.raises(cldmabuf.Error) as e:
                    cldmabuf.semaphore_from_sync_fd(ctx, fd)
            assert e.value.code == -30 and e.value.code_name == "CL_INVALID_VALUE"
            if os.environ.get("CLDMABUF_LOG", "error") != "none" and cldmabuf.layer_loaded(
                    ctx.devices[0].platform):
                assert "not a sync_file" in e.value.layer_log
            os.fstat(fd)
    finally:
        for fd in (r, w, dmabuf):
            os.close(fd)


def test_closed_fd_raises_oserror(ctx, sync_fd):
    r, w = os.pipe()
    os.close(r)
    os.close(w)
    with pytest.raises(OSError):
        cldmabuf.semaphore_from_sync_fd(ctx, r)


def test_signal_twice_is_refused(ctx, queue, sync_fd):
    # The rule of a binary semaphore (Vulkan's); the layer refuses it, the
    # spec leaves it undefined.
    if not cldmabuf.layer_loaded(ctx.devices[0].platform):
        pytest.skip("undefined by the spec; the layer's answer is tested")
    sema = cldmabuf.create_semaphore(ctx)
    gate = cl.UserEvent(ctx)
    cldmabuf.enqueue_signal_semaphores(queue, sema, wait_for=[gate])
    with pytest.raises(cldmabuf.Error) as e:
        cldmabuf.enqueue_signal_semaphores(queue, sema)
    assert e.value.code == -59
    gate.set_status(cl.command_execution_status.COMPLETE)
    queue.finish()
    sema.release()
