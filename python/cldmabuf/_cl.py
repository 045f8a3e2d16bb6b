"""The OpenCL C calls pyopencl does not wrap, through ctypes.

pyopencl 2022.3 (Debian 12) has no property-list constructors, no external
memory and no semaphores, so this module calls the ICD loader directly.  It
must be the loader pyopencl itself uses: the layer is a plugin of that
loader, and a second loader instance would not route calls through it.
"""

import ctypes
import ctypes.util

# ---- constants (CL/cl.h, CL/cl_ext.h, CL/cl_ext_cldmabuf.h) -------------------

SUCCESS = 0
INVALID_VALUE = -30

# cl_khr_external_memory, cl_khr_external_memory_dma_buf
EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR = 0x2067
MEM_DEVICE_HANDLE_LIST_KHR = 0x2051
MEM_DEVICE_HANDLE_LIST_END_KHR = 0
COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR = 0x2047
COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR = 0x2048

# cl_khr_semaphore, cl_khr_external_semaphore(_sync_fd)
SEMAPHORE_TYPE_KHR = 0x203D
SEMAPHORE_TYPE_BINARY_KHR = 1
SEMAPHORE_PAYLOAD_KHR = 0x203C
SEMAPHORE_EXPORT_HANDLE_TYPES_KHR = 0x203F
SEMAPHORE_EXPORT_HANDLE_TYPES_LIST_END_KHR = 0
SEMAPHORE_HANDLE_SYNC_FD_KHR = 0x2058
# cl_khr_semaphore 1.0 gives semaphores a device list of their own
# (CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR, 0x2053), which the layer reads; the
# provisional extension shared external memory's (0x2051: Debian 12's
# headers still say so).
SEMAPHORE_DEVICE_HANDLE_LIST_KHR = 0x2053
SEMAPHORE_DEVICE_HANDLE_LIST_END_KHR = 0

# The layer's own names (include/CL/cl_ext_cldmabuf.h).
MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF = 0x10C00
MEM_DMA_BUF_MODIFIER_CLDMABUF = 0x10C01
MEM_DMA_BUF_ALLOW_TILED_CLDMABUF = 0x10C02
MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF = 0x10C03
MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF = 0x10C04
PLATFORM_STATS_CLDMABUF = 0x10C08
MEM_DMA_BUF_ALLOCATE_CLDMABUF = 0x10C0A
MEM_DMA_BUF_EXPORTER_CLDMABUF = 0x10C0B
MEM_DMA_BUF_FD_CLDMABUF = 0x10C0C

DMA_BUF_EXPORTERS = {"any": 1, "i915": 2, "dma-heap": 3, "udmabuf": 4}
DMA_BUF_ROUTES = {0: "copy", 1: "host-ptr", 2: "image-from-buffer"}

MEM_OBJECT_IMAGE2D = 0x10F1

# Every error code of CL/cl.h and the Khronos extensions' headers, so that an
# exception can name codes newer than the installed pyopencl knows.
ERROR_NAMES = {
    0: "CL_SUCCESS",
    -1: "CL_DEVICE_NOT_FOUND",
    -2: "CL_DEVICE_NOT_AVAILABLE",
    -3: "CL_COMPILER_NOT_AVAILABLE",
    -4: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
    -5: "CL_OUT_OF_RESOURCES",
    -6: "CL_OUT_OF_HOST_MEMORY",
    -7: "CL_PROFILING_INFO_NOT_AVAILABLE",
    -8: "CL_MEM_COPY_OVERLAP",
    -9: "CL_IMAGE_FORMAT_MISMATCH",
    -10: "CL_IMAGE_FORMAT_NOT_SUPPORTED",
    -11: "CL_BUILD_PROGRAM_FAILURE",
    -12: "CL_MAP_FAILURE",
    -13: "CL_MISALIGNED_SUB_BUFFER_OFFSET",
    -14: "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
    -15: "CL_COMPILE_PROGRAM_FAILURE",
    -16: "CL_LINKER_NOT_AVAILABLE",
    -17: "CL_LINK_PROGRAM_FAILURE",
    -18: "CL_DEVICE_PARTITION_FAILED",
    -19: "CL_KERNEL_ARG_INFO_NOT_AVAILABLE",
    -30: "CL_INVALID_VALUE",
    -31: "CL_INVALID_DEVICE_TYPE",
    -32: "CL_INVALID_PLATFORM",
    -33: "CL_INVALID_DEVICE",
    -34: "CL_INVALID_CONTEXT",
    -35: "CL_INVALID_QUEUE_PROPERTIES",
    -36: "CL_INVALID_COMMAND_QUEUE",
    -37: "CL_INVALID_HOST_PTR",
    -38: "CL_INVALID_MEM_OBJECT",
    -39: "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR",
    -40: "CL_INVALID_IMAGE_SIZE",
    -41: "CL_INVALID_SAMPLER",
    -42: "CL_INVALID_BINARY",
    -43: "CL_INVALID_BUILD_OPTIONS",
    -44: "CL_INVALID_PROGRAM",
    -45: "CL_INVALID_PROGRAM_EXECUTABLE",
    -46: "CL_INVALID_KERNEL_NAME",
    -47: "CL_INVALID_KERNEL_DEFINITION",
    -48: "CL_INVALID_KERNEL",
    -49: "CL_INVALID_ARG_INDEX",
    -50: "CL_INVALID_ARG_VALUE",
    -51: "CL_INVALID_ARG_SIZE",
    -52: "CL_INVALID_KERNEL_ARGS",
    -53: "CL_INVALID_WORK_DIMENSION",
    -54: "CL_INVALID_WORK_GROUP_SIZE",
    -55: "CL_INVALID_WORK_ITEM_SIZE",
    -56: "CL_INVALID_GLOBAL_OFFSET",
    -57: "CL_INVALID_EVENT_WAIT_LIST",
    -58: "CL_INVALID_EVENT",
    -59: "CL_INVALID_OPERATION",
    -60: "CL_INVALID_GL_OBJECT",
    -61: "CL_INVALID_BUFFER_SIZE",
    -62: "CL_INVALID_MIP_LEVEL",
    -63: "CL_INVALID_GLOBAL_WORK_SIZE",
    -64: "CL_INVALID_PROPERTY",
    -65: "CL_INVALID_IMAGE_DESCRIPTOR",
    -66: "CL_INVALID_COMPILER_OPTIONS",
    -67: "CL_INVALID_LINKER_OPTIONS",
    -68: "CL_INVALID_DEVICE_PARTITION_COUNT",
    -69: "CL_INVALID_PIPE_SIZE",
    -70: "CL_INVALID_DEVICE_QUEUE",
    -71: "CL_INVALID_SPEC_ID",
    -72: "CL_MAX_SIZE_RESTRICTION_EXCEEDED",
    -1001: "CL_PLATFORM_NOT_FOUND_KHR",
    -1121: "CL_CONTEXT_TERMINATED_KHR",
    -1142: "CL_INVALID_SEMAPHORE_KHR",
}


def error_name(code):
    return ERROR_NAMES.get(code, "unknown OpenCL error")


# ---- the loader -----------------------------------------------------------------

def _loader_path():
    # pyopencl is imported first (by the package), so its loader is mapped
    # already: take that very file.  A wheel of pyopencl may bring its own
    # libOpenCL, and the soname alone could then name the system's, a second
    # loader that has not loaded the layer.
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(None, 5)[-1].strip()
                if "/libOpenCL" in path and ".so" in path:
                    return path
    except OSError:
        pass
    return ctypes.util.find_library("OpenCL") or "libOpenCL.so.1"


class _Loader:
    """Prototypes of the core calls; extension calls are looked up per platform."""

    def __init__(self):
        self.path = _loader_path()
        lib = ctypes.CDLL(self.path)
        vp, u32, u64, i32, sz = (ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64,
                                 ctypes.c_int32, ctypes.c_size_t)
        p_i32, p_sz = ctypes.POINTER(i32), ctypes.POINTER(sz)

        def proto(name, restype, *argtypes):
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = list(argtypes)
            return fn

        self.clCreateBufferWithProperties = proto(
            "clCreateBufferWithProperties", vp, vp, ctypes.POINTER(u64), u64, sz, vp, p_i32)
        self.clCreateImageWithProperties = proto(
            "clCreateImageWithProperties", vp, vp, ctypes.POINTER(u64), u64,
            ctypes.POINTER(ImageFormat), ctypes.POINTER(ImageDesc), vp, p_i32)
        self.clGetMemObjectInfo = proto("clGetMemObjectInfo", i32, vp, u32, sz, vp, p_sz)
        self.clGetPlatformInfo = proto("clGetPlatformInfo", i32, vp, u32, sz, vp, p_sz)
        self.clGetExtensionFunctionAddressForPlatform = proto(
            "clGetExtensionFunctionAddressForPlatform", vp, vp, ctypes.c_char_p)


class ImageFormat(ctypes.Structure):
    _fields_ = [("image_channel_order", ctypes.c_uint32),
                ("image_channel_data_type", ctypes.c_uint32)]


class ImageDesc(ctypes.Structure):
    _fields_ = [("image_type", ctypes.c_uint32),
                ("image_width", ctypes.c_size_t),
                ("image_height", ctypes.c_size_t),
                ("image_depth", ctypes.c_size_t),
                ("image_array_size", ctypes.c_size_t),
                ("image_row_pitch", ctypes.c_size_t),
                ("image_slice_pitch", ctypes.c_size_t),
                ("num_mip_levels", ctypes.c_uint32),
                ("num_samples", ctypes.c_uint32),
                ("mem_object", ctypes.c_void_p)]


_loader = None


def loader():
    global _loader
    if _loader is None:
        _loader = _Loader()
    return _loader


# Extension entry points, by name: (restype, argtypes).
_vp, _u32, _i32, _sz = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int32, ctypes.c_size_t
_P = ctypes.POINTER
_ENQUEUE_MEM = (_i32, [_vp, _u32, _P(_vp), _u32, _P(_vp), _P(_vp)])
_ENQUEUE_SEMA = (_i32, [_vp, _u32, _P(_vp), _P(ctypes.c_uint64), _u32, _P(_vp), _P(_vp)])
_EXTENSION_PROTOTYPES = {
    "clEnqueueAcquireExternalMemObjectsKHR": _ENQUEUE_MEM,
    "clEnqueueReleaseExternalMemObjectsKHR": _ENQUEUE_MEM,
    "clCreateSemaphoreWithPropertiesKHR": (_vp, [_vp, _P(ctypes.c_uint64), _P(_i32)]),
    "clEnqueueWaitSemaphoresKHR": _ENQUEUE_SEMA,
    "clEnqueueSignalSemaphoresKHR": _ENQUEUE_SEMA,
    "clGetSemaphoreInfoKHR": (_i32, [_vp, _u32, _sz, _vp, _P(_sz)]),
    "clGetSemaphoreHandleForTypeKHR": (_i32, [_vp, _vp, _u32, _sz, _vp, _P(_sz)]),
    "clRetainSemaphoreKHR": (_i32, [_vp]),
    "clReleaseSemaphoreKHR": (_i32, [_vp]),
}
_extension_cache = {}


def extension_function(platform_ptr, name):
    """The platform's entry point for an extension call, or None."""
    key = (platform_ptr, name)
    if key not in _extension_cache:
        address = loader().clGetExtensionFunctionAddressForPlatform(platform_ptr, name.encode())
        fn = None
        if address:
            restype, argtypes = _EXTENSION_PROTOTYPES[name]
            fn = ctypes.CFUNCTYPE(restype, *argtypes)(address)
        _extension_cache[key] = fn
    return _extension_cache[key]


def properties(values):
    """A zero-terminated cl_properties array."""
    values = list(values) + [0]
    return (ctypes.c_uint64 * len(values))(*values)


def handles(objects):
    """(count, array) of the handles of pyopencl objects (events, cl_mem)."""
    objects = list(objects or ())
    if not objects:
        return 0, None
    return len(objects), (ctypes.c_void_p * len(objects))(*[o.int_ptr for o in objects])
