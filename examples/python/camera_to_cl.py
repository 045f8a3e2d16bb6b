#!/usr/bin/python3
"""V4L2 camera -> dma-buf -> pyopencl kernel -> numpy, zero-copy where the device allows.

    OPENCL_LAYERS=$(pkg-config --variable=layer cldmabuf) python3 camera_to_cl.py [/dev/videoN] [frames]

The camera's buffers are exported as dma-bufs (VIDIOC_EXPBUF) and imported
once each with cldmabuf.import_buffer; per frame a kernel takes the luma of
the YUYV frame into a plain buffer, and the result is checked against the
CPU's read of the same dma-buf.  Exit status: 0 every frame correct, 1 a
wrong frame, 2 no usable camera.  (In the VM lane the kernel's vivid driver
is such a camera; examples/v4l2_camera.cpp is the C++ form.)
"""

import ctypes
import fcntl
import mmap
import os
import select
import sys

import numpy as np
import pyopencl as cl

import cldmabuf

u8, u32, i32 = ctypes.c_uint8, ctypes.c_uint32, ctypes.c_int32


class Format(ctypes.Structure):  # struct v4l2_format with its v4l2_pix_format member
    _fields_ = [("type", u32), ("pad", u32), ("width", u32), ("height", u32), ("pixelformat", u32),
                ("field", u32), ("bytesperline", u32), ("sizeimage", u32), ("rest", u8 * 176)]


class RequestBuffers(ctypes.Structure):
    _fields_ = [("count", u32), ("type", u32), ("memory", u32), ("caps", u32), ("flags", u32)]


class ExportBuffer(ctypes.Structure):
    _fields_ = [("type", u32), ("index", u32), ("plane", u32), ("flags", u32), ("fd", i32),
                ("reserved", u32 * 11)]


class Buffer(ctypes.Structure):  # struct v4l2_buffer, 64-bit
    _fields_ = [("index", u32), ("type", u32), ("bytesused", u32), ("flags", u32), ("field", u32),
                ("rest1", u8 * 40), ("memory", u32), ("m", ctypes.c_uint64), ("length", u32),
                ("rest2", u8 * 12)]


CAPTURE, MMAP, YUYV = 1, 1, 0x56595559  # V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_MEMORY_MMAP, 'YUYV'
VIDIOC_S_FMT, VIDIOC_REQBUFS, VIDIOC_EXPBUF = 0xC0D05605, 0xC0145608, 0xC0405610
VIDIOC_QBUF, VIDIOC_DQBUF, VIDIOC_STREAMON, VIDIOC_STREAMOFF = 0xC058560F, 0xC0585611, 0x40045612, 0x40045613
assert ctypes.sizeof(Format) == 208 and ctypes.sizeof(Buffer) == 88

LUMA = """
__kernel void luma(__global const uchar *yuyv, uint pitch, __global uchar *y) {
    uint col = get_global_id(0), row = get_global_id(1);
    y[row * get_global_size(0) + col] = yuyv[row * pitch + 2 * col];
}
"""


def ioctl(fd, request, struct):
    buf = bytearray(struct)
    fcntl.ioctl(fd, request, buf, True)
    ctypes.memmove(ctypes.addressof(struct), bytes(buf), len(buf))
    return struct


def cpu_luma(fd, size, fmt):
    # The dma-buf's own mapping, between DMA_BUF_IOCTL_SYNC START and END (read).
    with mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ) as m:
        fcntl.ioctl(fd, 0x40086200, (1).to_bytes(8, "little"))
        rows = np.frombuffer(m, np.uint8, fmt.bytesperline * fmt.height).reshape(fmt.height, -1)
        y = rows[:, 0:2 * fmt.width:2].copy()
        del rows
        fcntl.ioctl(fd, 0x40086200, (1 | 4).to_bytes(8, "little"))
    return y


def main(path="/dev/video0", frames="8"):
    try:
        cam = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        fmt = ioctl(cam, VIDIOC_S_FMT, Format(type=CAPTURE, width=640, height=480, pixelformat=YUYV))
        if fmt.pixelformat != YUYV:
            raise OSError("the camera gives no YUYV")
        req = ioctl(cam, VIDIOC_REQBUFS, RequestBuffers(count=4, type=CAPTURE, memory=MMAP))
    except OSError as e:
        print("camera_to_cl: no V4L2 camera at %s that streams YUYV: %s" % (path, e), file=sys.stderr)
        return 2

    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    kernel = cl.Program(ctx, LUMA).build().luma
    fds, bufs = [], []
    for i in range(req.count):
        fds.append(ioctl(cam, VIDIOC_EXPBUF, ExportBuffer(type=CAPTURE, index=i)).fd)
        bufs.append(cldmabuf.import_buffer(ctx, fds[i], fmt.sizeimage, flags=cl.mem_flags.READ_ONLY))
        ioctl(cam, VIDIOC_QBUF, Buffer(index=i, type=CAPTURE, memory=MMAP))
    out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, fmt.width * fmt.height)
    fcntl.ioctl(cam, VIDIOC_STREAMON, CAPTURE.to_bytes(4, "little"))
    correct = 0
    for _ in range(int(frames)):
        select.select([cam], [], [], 5.0)
        b = ioctl(cam, VIDIOC_DQBUF, Buffer(type=CAPTURE, memory=MMAP))
        y = np.empty((fmt.height, fmt.width), np.uint8)
        with cldmabuf.acquired(queue, bufs[b.index]):
            kernel(queue, (fmt.width, fmt.height), None, bufs[b.index], np.uint32(fmt.bytesperline), out)
            cl.enqueue_copy(queue, y, out)
        queue.finish()
        correct += np.array_equal(y, cpu_luma(fds[b.index], fmt.sizeimage, fmt))
        ioctl(cam, VIDIOC_QBUF, Buffer(index=b.index, type=CAPTURE, memory=MMAP))
    fcntl.ioctl(cam, VIDIOC_STREAMOFF, CAPTURE.to_bytes(4, "little"))
    route = cldmabuf.import_route(bufs[0]) if cldmabuf.layer_loaded(ctx.devices[0].platform) else "native"
    print("camera_to_cl: %d/%s frames correct (%dx%d YUYV, import route %s), mean luma %.1f"
          % (correct, frames, fmt.width, fmt.height, route, y.mean()))
    for buf, fd in zip(bufs, fds):
        buf.release()
        os.close(fd)
    os.close(cam)
    return 0 if correct == int(frames) else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
