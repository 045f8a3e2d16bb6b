"""Exceptions, and the layer's log line of a refused call."""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading

import pyopencl as cl

from . import _cl

# Whether fd 2 is captured around each call (set_log_capture).
_capture = os.environ.get("CLDMABUF_PY_LOG_CAPTURE", "1") != "0"


def set_log_capture(enabled):
    """Turns the capture of the layer's log around each call on or off.

    On (the default), stderr is redirected into a memory file for the
    duration of each OpenCL call of this package and written back right
    after it, so that the exception of a refused call can quote the layer's
    ``cldmabuf: error:`` line.  Turn it off (or set
    ``CLDMABUF_PY_LOG_CAPTURE=0``) where stderr must never be redirected,
    even for one call: when debugging a crash inside the call, whose last
    lines would stay in the file.
    """
    global _capture
    _capture = bool(enabled)


class Error(cl.Error):
    """An OpenCL call failed.

    A :class:`pyopencl.Error`, so ``except pyopencl.Error`` catches it, with
    :attr:`code` (the OpenCL status), :attr:`routine` (the C call) and:

    .. attribute:: code_name

        The status's name, e.g. ``"CL_INVALID_PROPERTY"``.

    .. attribute:: layer_log

        The layer's last ``cldmabuf:`` log line written during the call
        (``None`` when there was none: the layer not loaded,
        ``CLDMABUF_LOG=none``, or :func:`set_log_capture` off).
    """

    def __init__(self, routine, code, layer_log=None, detail=""):
        self._routine, self._code = routine, code
        self.code_name = _cl.error_name(code)
        self.layer_log = layer_log
        message = "%s (%d)" % (self.code_name, code)
        if detail:
            message += ": " + detail
        if layer_log:
            message += "; the layer said: " + layer_log
        else:
            message += "; run with CLDMABUF_LOG=info for the layer's account"
        self._message = message
        # pyopencl's own errors carry an _ErrorRecord (its .what); a
        # pyopencl without that private class still gets the message.
        try:
            record = cl._cl._ErrorRecord(routine, code, message)
        except (AttributeError, TypeError):
            record = message
        super().__init__(record)

    @property
    def code(self):
        return self._code

    @property
    def routine(self):
        return self._routine

    def __str__(self):
        return "%s failed: %s" % (self._routine, self._message)


class NotSupportedError(RuntimeError):
    """The platform lacks what the call needs (an extension, or the layer)."""


def layer_hint():
    """How to enable the layer, with its installed path where pkg-config knows it."""
    path = None
    if shutil.which("pkg-config"):
        try:
            out = subprocess.run(["pkg-config", "--variable=layer", "cldmabuf"],
                                 capture_output=True, text=True, timeout=10)
            if out.returncode == 0 and out.stdout.strip():
                path = out.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    how = "OPENCL_LAYERS=%s" % (path or "/path/to/libcldmabuf.so")
    hint = ("enable the cldmabuf layer in the environment before the process makes its first "
            "OpenCL call: %s python3 ... (installed: OPENCL_LAYERS=$(pkg-config --variable=layer "
            "cldmabuf); from a build tree: OPENCL_LAYERS=$PWD/build/layer/libcldmabuf.so)" % how)
    current = os.environ.get("OPENCL_LAYERS")
    if current:
        hint += ("; OPENCL_LAYERS=%s is set but the layer is not loaded (ocl-icd ignores a wrong "
                 "path silently; cldmabuf-info tells)" % current)
    return hint


_capture_lock = threading.Lock()


class _Captured:
    text = ""

    def last_line(self):
        lines = [l for l in self.text.splitlines() if l.startswith("cldmabuf: ")]
        errors = [l for l in lines if l.startswith("cldmabuf: error:")]
        return (errors or lines or [None])[-1]


def _sink():
    # A memfd costs a few microseconds (a TemporaryFile in /tmp about 50):
    # this runs around every acquire and release, so once or twice a frame.
    try:
        return os.memfd_create("cldmabuf-log", os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        return os.dup(tempfile.TemporaryFile().fileno())


@contextlib.contextmanager
def layer_log():
    """Redirects fd 2 into a memory file for the block, then writes it back.

    The layer writes its log with one write(2) per line on stderr; there is no
    other way to read it from inside the process.  One block at a time (a
    lock), since fd 2 is the process's.
    """
    captured = _Captured()
    if not _capture:
        yield captured
        return
    with _capture_lock:
        try:
            sys.stderr.flush()
        except (AttributeError, OSError, ValueError):
            pass
        try:
            saved = os.dup(2)
        except OSError:
            # No stderr at all (a daemon): nothing to capture.
            yield captured
            return
        try:
            sink = _sink()
            try:
                os.dup2(sink, 2)
                try:
                    yield captured
                finally:
                    os.dup2(saved, 2)
                    size = os.lseek(sink, 0, os.SEEK_END)
                    data = os.pread(sink, size, 0) if size else b""
                    _write_all(2, data)
                    captured.text = data.decode(errors="replace")
            finally:
                os.close(sink)
        finally:
            os.close(saved)


def _write_all(fd, data):
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        pass


def check(routine, code, log=None, detail=""):
    if code != _cl.SUCCESS:
        raise Error(routine, code, log.last_line() if log is not None else None, detail)
