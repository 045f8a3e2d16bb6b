"""import_image: padded rows, kernel writes, NV12 planes, fourcc layouts, refusals."""

import os

import pytest

from conftest import require

cl, np = require()

import cldmabuf  # noqa: E402
import dmabufs  # noqa: E402

mf = cl.mem_flags
RGBA8UI = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.UNSIGNED_INT8)


def _supported(ctx, fmt, flags=mf.READ_ONLY):
    return any(f.channel_order == fmt.channel_order and f.channel_data_type == fmt.channel_data_type
               for f in cl.get_supported_image_formats(ctx, flags, cl.mem_object_type.IMAGE2D))


def _random_bytes(n, seed):
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)


def _read_image(queue, prg, img, kernel, dtype):
    w, h = img.shape
    out = cl.Buffer(img.context, mf.WRITE_ONLY, w * h * 16)
    getattr(prg, kernel)(queue, (w, h), None, img, out)
    host = np.empty((h, w, 4), dtype=dtype)
    cl.enqueue_copy(queue, host, out)
    return host


def test_rgba_image_with_padded_rows(ctx, queue, prg, source):
    w, h, pitch = 40, 12, 256
    data = _random_bytes(pitch * h, 1)
    fd = source.make(data.size)
    try:
        dmabufs.write(fd, data.tobytes())
        img = cldmabuf.import_image(ctx, fd, RGBA8UI, (w, h), pitch=pitch, flags=mf.READ_ONLY)
        assert isinstance(img, cl.Image) and img.shape == (w, h)
        with cldmabuf.acquired(queue, img):
            got = _read_image(queue, prg, img, "read_ui", np.uint32)
        queue.finish()
        want = data.reshape(h, pitch)[:, :4 * w].reshape(h, w, 4)
        np.testing.assert_array_equal(got, want)
        img.release()
    finally:
        os.close(fd)


def test_kernel_writes_pixels_and_leaves_the_row_padding(ctx, queue, prg, source):
    w, h, pitch = 40, 12, 256
    fd = source.make(pitch * h)
    try:
        dmabufs.write(fd, b"\xab" * (pitch * h))
        img = cldmabuf.import_image(ctx, fd, RGBA8UI, (w, h), pitch=pitch, flags=mf.WRITE_ONLY)
        with cldmabuf.acquired(queue, img) as handoff:
            prg.write_ui(queue, (w, h), None, img)
        handoff.release_event.wait()
        rows = np.frombuffer(dmabufs.read(fd, pitch * h), dtype=np.uint8).reshape(h, pitch)
        y, x = np.mgrid[0:h, 0:w]
        want = np.stack([x, y, x ^ y, np.full_like(x, 200)], axis=-1).astype(np.uint8)
        np.testing.assert_array_equal(rows[:, :4 * w].reshape(h, w, 4), want)
        assert (rows[:, 4 * w:] == 0xAB).all(), "the row padding was written"
        img.release()
    finally:
        os.close(fd)


def test_nv12_planes(ctx, queue, prg, source, no_fd_leak):
    if not cldmabuf.layer_loaded(ctx.devices[0].platform):
        pytest.skip("the chroma plane's offset is a property of the layer")
    w, h, pitch = 64, 32, 128
    data = _random_bytes(pitch * h * 3 // 2, 2)
    fd = source.make(data.size)
    try:
        dmabufs.write(fd, data.tobytes())
        luma_want = data[:pitch * h].reshape(h, pitch)[:, :w]
        chroma_rows = data[pitch * h:].reshape(h // 2, pitch)[:, :w]
        rg8 = cldmabuf.fourcc_layout("NV12")[1].format
        if _supported(ctx, rg8):
            luma, chroma = cldmabuf.import_image(ctx, fd, "NV12", (w, h), pitch=pitch, flags=mf.READ_ONLY)
            assert chroma.shape == (w // 2, h // 2)
            with cldmabuf.acquired(queue, (luma, chroma)):
                y = _read_image(queue, prg, luma, "read_f", np.float32)
                uv = _read_image(queue, prg, chroma, "read_f", np.float32)
            queue.finish()
            np.testing.assert_array_equal(np.rint(y[..., 0] * 255), luma_want)
            np.testing.assert_array_equal(np.rint(uv[..., :2] * 255).reshape(h // 2, w), chroma_rows)
            luma.release()
            chroma.release()
            return
        # The device lacks CL_RG (PoCL 3.1): the fourcc import is refused as a
        # whole, with the luma plane already made released again ...
        with no_fd_leak():
            with pytest.raises(cldmabuf.Error) as e:
                cldmabuf.import_image(ctx, fd, "NV12", (w, h), pitch=pitch, flags=mf.READ_ONLY)
        assert e.value.code == -10 and e.value.code_name == "CL_IMAGE_FORMAT_NOT_SUPPORTED"
        # ... and the chroma plane is read through a format of its pixel size.
        r16ui = cl.ImageFormat(cl.channel_order.R, cl.channel_type.UNSIGNED_INT16)
        luma = cldmabuf.import_image(ctx, fd, cldmabuf.fourcc_layout("NV12")[0].format, (w, h),
                                     pitch=pitch, flags=mf.READ_ONLY)
        chroma = cldmabuf.import_image(ctx, fd, r16ui, (w // 2, h // 2), planes=[(pitch * h, pitch)],
                                       flags=mf.READ_ONLY)
        with cldmabuf.acquired(queue, luma, chroma):
            y = _read_image(queue, prg, luma, "read_f", np.float32)
            uv = _read_image(queue, prg, chroma, "read_ui", np.uint32)
        queue.finish()
        np.testing.assert_array_equal(np.rint(y[..., 0] * 255), luma_want)
        u16 = chroma_rows.reshape(h // 2, w // 2, 2).astype(np.uint32)
        np.testing.assert_array_equal(uv[..., 0], u16[..., 0] | (u16[..., 1] << 8))
        luma.release()
        chroma.release()
    finally:
        os.close(fd)


def test_fourcc_layouts():
    nv12 = cldmabuf.fourcc_layout("NV12")
    assert [(p.format.channel_order, p.format.channel_data_type, p.width_divisor, p.height_divisor,
             p.bytes_per_pixel) for p in nv12] == [
        (cl.channel_order.R, cl.channel_type.UNORM_INT8, 1, 1, 1),
        (cl.channel_order.RG, cl.channel_type.UNORM_INT8, 2, 2, 2)]
    p010 = cldmabuf.fourcc_layout(0x30313050)  # fourcc_code('P', '0', '1', '0')
    assert [p.bytes_per_pixel for p in p010] == [2, 4]
    assert p010[1].format.channel_data_type == cl.channel_type.UNORM_INT16
    assert cldmabuf.fourcc_layout("AR24")[0].format.channel_order == cl.channel_order.BGRA
    assert cldmabuf.fourcc_layout("R8") == cldmabuf.fourcc_layout("R8  ")
    with pytest.raises(ValueError):
        cldmabuf.fourcc_layout("YUYV")


# ---- refusals --------------------------------------------------------------------------------

@pytest.mark.parametrize("case,code,name", [
    ("pitch below a row", -65, "CL_INVALID_IMAGE_DESCRIPTOR"),
    ("larger than the dma-buf", -40, "CL_INVALID_IMAGE_SIZE"),
    ("not a dma-buf", -64, "CL_INVALID_PROPERTY"),
    ("tiled without consent", -64, "CL_INVALID_PROPERTY"),
])
def test_image_refusals(ctx, source, no_fd_leak, case, code, name):
    w, h = 64, 16
    fd = source.make(4 * w * h)
    r, wr = os.pipe()
    kwargs = {}
    target, shape = fd, (w, h)
    if case == "pitch below a row":
        kwargs["pitch"] = 4 * w - 4
    elif case == "larger than the dma-buf":
        shape = (w, 4 * h)
    elif case == "not a dma-buf":
        target = r
    else:
        if not cldmabuf.layer_loaded(ctx.devices[0].platform):
            pytest.skip("modifiers are properties of the layer")
        kwargs["modifier"] = (1 << 56) | 2  # I915_FORMAT_MOD_Y_TILED
    try:
        with no_fd_leak():
            with pytest.raises(cldmabuf.Error) as e:
                cldmabuf.import_image(ctx, target, RGBA8UI, shape, flags=mf.READ_ONLY, **kwargs)
        assert (e.value.code, e.value.code_name) == (code, name)
        assert e.value.routine == "clCreateImageWithProperties"
        os.fstat(target)  # still the caller's, still open
    finally:
        for f in (fd, r, wr):
            os.close(f)


def test_bad_arguments_raise_before_any_call(ctx, source, no_fd_leak):
    fd = source.make(4096)
    try:
        with no_fd_leak():
            with pytest.raises(ValueError):
                cldmabuf.import_image(ctx, fd, "NV12", (63, 32))  # odd width: no half-width chroma
            with pytest.raises(ValueError):
                cldmabuf.import_image(ctx, fd, "NV12", (64, 32), planes=[(0, 64)])
    finally:
        os.close(fd)
