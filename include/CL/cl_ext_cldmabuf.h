/* cldmabuf's public additions to the OpenCL API.
 *
 * Properties, queries and helpers understood by libcldmabuf.so (an OpenCL
 * ICD-loader layer) on top of cl_khr_external_memory and
 * cl_khr_external_memory_dma_buf.  Only the layer knows these names: an
 * application that uses them runs with the layer enabled
 * (OPENCL_LAYERS=.../libcldmabuf.so).  The layer strips its memory
 * properties from a property list before the ICD sees it, so an ICD never
 * has to understand them; CL_MEM_PROPERTIES still answers the caller's
 * whole list.
 *
 * Contents, in this order:
 *   0x10C00  CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF   image import properties
 *   0x10C01  CL_MEM_DMA_BUF_MODIFIER_CLDMABUF       (clCreateImageWithProperties;
 *   0x10C02  CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF     docs/images.md)
 *   0x10C03  CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF
 *   0x10C04  CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF   clGetMemObjectInfo: the import's route
 *   0x10C08  CL_PLATFORM_STATS_CLDMABUF             clGetPlatformInfo: the layer's counters
 *   0x10C0A  CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF       the layer allocates the memory as a dma-buf
 *   0x10C0B  CL_MEM_DMA_BUF_EXPORTER_CLDMABUF       clGetMemObjectInfo: which exporter allocated it
 *   0x10C0C  CL_MEM_DMA_BUF_FD_CLDMABUF             clGetMemObjectInfo: a new fd of its dma-buf
 *   0x10C0F  CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF      EGL/GL tiled-export consent (docs/egl.md)
 *   cl_dma_buf_fourcc_layout_cldmabuf()             DRM fourcc -> OpenCL image formats
 * 0x10C05-0x10C07, 0x10C09 and 0x10C0D-0x10C0E are unused.
 *
 * Enum values.  Everything here is taken from 0x10C00-0x10C0F, inside the
 * block the Khronos registry (OpenCL-Docs xml/cl.xml, <enums start="0x10000"
 * end="0x10FFF" name="enums.10000">) marks "Experimental range for internal
 * development only. Do not allocate.": Khronos never assigns a value there,
 * so no Khronos header (and no registered vendor extension) collides with
 * these names. */
#ifndef CL_EXT_CLDMABUF_H
#define CL_EXT_CLDMABUF_H

#include <CL/cl.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- dma-buf image import properties (clCreateImageWithProperties) ---- */

/* Byte offset of the plane inside the dma-buf (cl_mem_properties value;
 * default 0).  Lets one dma-buf hold several planes, e.g. NV12's luma at 0
 * and chroma at pitch * height. */
#define CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF 0x10C00

/* DRM format modifier of the dma-buf (cl_mem_properties value, the 64-bit
 * DRM_FORMAT_MOD_* code from drm_fourcc.h; default: linear).
 *   DRM_FORMAT_MOD_LINEAR (0)           imported in place.
 *   DRM_FORMAT_MOD_INVALID (2^56 - 1)   "unknown": refused with
 *       CL_INVALID_PROPERTY unless CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF is
 *       CL_TRUE (the application vouches that the layout is linear).
 *   I915_FORMAT_MOD_X_TILED / Y_TILED   refused with CL_INVALID_PROPERTY
 *       unless CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF is CL_TRUE (then a tiled
 *       import through the blitter, see there).
 *   Compressed (CCS), Yf/Ys and all other modifiers: always
 *       CL_INVALID_PROPERTY. */
#define CL_MEM_DMA_BUF_MODIFIER_CLDMABUF 0x10C01

/* Consent to a tiled import (cl_mem_properties value CL_TRUE/CL_FALSE).
 * An X- or Y-tiled dma-buf cannot be used in place by a linear OpenCL image.
 * With consent the ICD gets a linear shadow instead (a GEM object on the
 * Gen9 i915 node), which the Gen9 blitter fills from the dma-buf on acquire
 * and writes back on release (not for a CL_MEM_READ_ONLY image): whole-image
 * copies the application agrees to pay for with this flag.  2D images only.
 * The import fails with CL_INVALID_OPERATION, the fd staying the
 * application's, when no Gen9 blitter serves it: no i915 Gen9 node,
 * CLDMABUF_BLT=off, a device of the import the node does not serve, or a
 * dma-buf of an exporter the blitter does not take.  Rules and errors:
 * docs/images.md, "Tiled imports (X / Y) through the blitter".
 * Also a cl_context_properties of a context created with
 * CL_CONTEXT_VA_API_DISPLAY_INTEL: the same consent for every VA surface
 * plane clCreateFromVA_APIMediaSurfaceINTEL imports in it (that call has no
 * property list; docs/va-api.md); CL_INVALID_PROPERTY without a VA display. */
#define CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF 0x10C02

/* The application vouches that a dma-buf whose modifier is
 * DRM_FORMAT_MOD_INVALID ("unknown", e.g. from an implicit-modifier
 * exporter) is linear (cl_mem_properties value CL_TRUE/CL_FALSE). */
#define CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF 0x10C03

/* ---- Memory object query (clGetMemObjectInfo) --------------------------- */

/* How the layer gave the ICD access to an imported image or buffer
 * (cl_uint, one of the values below; for a tiled import, access to its
 * linear shadow).  Buffers answer HOST_PTR or COPY.  CL_INVALID_VALUE on a
 * cl_mem that is not an import of this layer. */
#define CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF 0x10C04

#define CL_DMA_BUF_ROUTE_COPY_CLDMABUF 0              /* device copy, synced on acquire/release */
#define CL_DMA_BUF_ROUTE_HOST_PTR_CLDMABUF 1          /* CL_MEM_USE_HOST_PTR over the mapping (zero-copy) */
#define CL_DMA_BUF_ROUTE_IMAGE_FROM_BUFFER_CLDMABUF 2 /* USE_HOST_PTR buffer + cl_khr_image2d_from_buffer (zero-copy) */

/* ---- The allocator (docs/allocator.md) ---------------------------------- */

/* Asks the layer to allocate the object's memory as a dma-buf
 * (clCreateBufferWithProperties; clCreateImageWithProperties for linear 2D
 * images).  Value: CL_DMA_BUF_EXPORTER_ANY_CLDMABUF (the first of: a GEM
 * object of the Gen9 i915 node that serves every device of the context,
 * exported with PRIME so the blitter reaches it; the system dma-heap;
 * udmabuf over a memfd) or one exporter below.  The object is then an
 * import like any other (zero-copy where the device shares memory, the
 * copy route otherwise; acquire/release and map/unmap bracket CPU access).
 * host_ptr must be NULL and CL_MEM_USE/ALLOC/COPY_HOST_PTR unset; no
 * external memory handle may be given with it.  Errors (one log line each,
 * nothing left behind): CL_INVALID_PROPERTY (a value naming no exporter, a
 * handle given too), CL_INVALID_HOST_PTR, CL_INVALID_VALUE (host-pointer
 * flags), CL_INVALID_OPERATION (no allowed exporter exists here),
 * CL_INVALID_BUFFER_SIZE (every exporter there refused the size),
 * CL_MEM_OBJECT_ALLOCATION_FAILURE (out of memory). */
#define CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF 0x10C0A

#define CL_DMA_BUF_EXPORTER_ANY_CLDMABUF 1
#define CL_DMA_BUF_EXPORTER_I915_GEM_CLDMABUF 2 /* DRM_IOCTL_I915_GEM_CREATE + PRIME_HANDLE_TO_FD */
#define CL_DMA_BUF_EXPORTER_DMA_HEAP_CLDMABUF 3 /* /dev/dma_heap/system */
#define CL_DMA_BUF_EXPORTER_UDMABUF_CLDMABUF 4  /* /dev/udmabuf over a sealed memfd */

/* clGetMemObjectInfo: the exporter that allocated the object (cl_uint, one of
 * the I915_GEM/DMA_HEAP/UDMABUF values).  CL_INVALID_VALUE on an object the
 * layer did not allocate. */
#define CL_MEM_DMA_BUF_EXPORTER_CLDMABUF 0x10C0B

/* clGetMemObjectInfo: a new fd of the object's dma-buf (cl_int), owned by the
 * caller, who closes it: for another process (SCM_RIGHTS), EGL
 * (EGL_EXT_image_dma_buf_import), V4L2, Vulkan, another OpenCL context or
 * ICD.  Each successful query makes a new fd; a query with param_value NULL
 * (size only) makes none.  Coherency with the devices is the handoff's:
 * release (or unmap) the object before another consumer reads it.
 * CL_INVALID_VALUE on an object the layer did not allocate. */
#define CL_MEM_DMA_BUF_FD_CLDMABUF 0x10C0C

/* ---- The layer's counters (clGetPlatformInfo) --------------------------- */

/* The layer's process-wide counters (those CLDMABUF_STATS=1 prints), as
 * cl_ulong[CL_STATS_COUNT_CLDMABUF] indexed by the values below; any
 * platform answers.  New counters only ever go at the end, and a smaller
 * array of at least the first 13 gets the counters it has room for.  Tests
 * use them to learn which route the layer took (the blitter, the copy
 * route's directions and staging) on this ICD. */
#define CL_PLATFORM_STATS_CLDMABUF 0x10C08

#define CL_STATS_BLT_COPIES_CLDMABUF 0        /* copies the Gen9 blitter ran */
#define CL_STATS_COPY_IN_BYTES_CLDMABUF 1     /* copy route, acquire: dma-buf -> device copy */
#define CL_STATS_COPY_OUT_BYTES_CLDMABUF 2    /* copy route, release: device copy -> dma-buf */
#define CL_STATS_STAGED_BYTES_CLDMABUF 3      /* of those, through pinned staging */
#define CL_STATS_STAGED_TRANSFERS_CLDMABUF 4  /* copy-route transfers through pinned staging */
#define CL_STATS_DIRECT_TRANSFERS_CLDMABUF 5  /* ... with the ICD's Write/Read from the mapping */
#define CL_STATS_STAGING_FALLBACKS_CLDMABUF 6 /* staging wanted, the ICD refused it */
#define CL_STATS_LIVE_WORKERS_CLDMABUF 7      /* per-queue host-step threads running now (a gauge) */
#define CL_STATS_FAST_HANDOFFS_CLDMABUF 8     /* acquires/releases done at once (nothing to wait for) */
#define CL_STATS_QUEUED_HANDOFFS_CLDMABUF 9   /* ... stitched into the queue (marker, worker, gate, barrier) */
#define CL_STATS_BLT_FENCE_IN_CLDMABUF 10      /* blitter batches that waited for a semaphore as FENCE_IN */
#define CL_STATS_BLT_FENCE_OUT_CLDMABUF 11     /* ... whose FENCE_OUT became a semaphore's signal */
#define CL_STATS_BLT_FENCE_IN_FALLBACKS_CLDMABUF 12 /* claimed waits the execbuffer refused (host wait) */
#define CL_STATS_QUIET_HANDOFFS_CLDMABUF 13   /* ... of the fast ones, on a queue known idle (no marker watched) */
#define CL_STATS_LIVE_IMPORTS_CLDMABUF 14     /* imports the application holds now (a gauge) */
#define CL_STATS_LIVE_LAYER_EVENTS_CLDMABUF 15 /* events of layer commands the application holds now (a gauge) */
#define CL_STATS_FENCE_TIMEOUTS_CLDMABUF 16   /* fence waits the layer gave up at CLDMABUF_FENCE_TIMEOUT_MS */
#define CL_STATS_RELEASE_FENCES_EXPIRED_CLDMABUF 17 /* release fences signalled at that bound, their release not run */
#define CL_STATS_ALIAS_MERGES_CLDMABUF 18   /* copy-route releases that wrote back only what changed (another import shares the dma-buf) */
#define CL_STATS_PARKED_MAPPINGS_CLDMABUF 19 /* dma-buf mappings kept for a re-import, each with its own fd (a gauge) */
#define CL_STATS_REGISTRATIONS_MADE_CLDMABUF 20 /* copy route: the ICD's CL_MEM_USE_HOST_PTR buffers over an import's mapping */
#define CL_STATS_REGISTRATIONS_REUSED_CLDMABUF 21 /* ... taken back parked with the mapping by a re-import */
#define CL_STATS_STEPS_POLLED_CLDMABUF 22 /* host steps whose marker the layer's status poll saw ended before its callback (CLDMABUF_STEP_POLL) */
#define CL_STATS_STEP_CALLBACK_RECORDS_CLDMABUF 23 /* layer steps' barrier callbacks registered and neither run nor outlived by the barrier's end (a gauge) */
#define CL_STATS_COUNT_CLDMABUF 24

/* ---- EGL/GL interop (layer/egl, docs/egl.md) ----------------------------- */

/* Consent to a tiled (non-linear) EGLImage or GL texture: a
 * cl_egl_image_properties_khr for clCreateFromEGLImageKHR, or a
 * cl_context_properties for a GL-sharing context (then it applies to every
 * clCreateFromGLTexture/Renderbuffer of that context); value CL_TRUE or
 * CL_FALSE.  Without it a non-linear export is refused (CL_IMAGE_FORMAT_NOT_SUPPORTED
 * from clCreateFromEGLImageKHR, CL_INVALID_OPERATION from clCreateFromGL*);
 * with it the layer keeps a linear GBM buffer beside the GL object and copies
 * on the GPU (one glBlitFramebuffer in the producer's context on acquire, one
 * back on release unless the cl_mem is CL_MEM_READ_ONLY; docs/egl.md, "Tiled
 * exports").  CLDMABUF_DEBUG=egl-force-copy (a test switch) treats every
 * export as tiled. */
#define CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF 0x10C0F

/* ---- DRM fourcc -> OpenCL image formats --------------------------------- */

/* A DRM fourcc code (drm_fourcc.h fourcc_code()). */
#define CL_DRM_FOURCC_CLDMABUF(a, b, c, d)                                              \
    ((cl_uint)(unsigned char)(a) | ((cl_uint)(unsigned char)(b) << 8) |                 \
     ((cl_uint)(unsigned char)(c) << 16) | ((cl_uint)(unsigned char)(d) << 24))

typedef struct cl_dma_buf_plane_cldmabuf {
    cl_image_format format;  /* the OpenCL format this plane imports as */
    cl_uint width_divisor;   /* plane width  = frame width  / width_divisor  */
    cl_uint height_divisor;  /* plane height = frame height / height_divisor */
    cl_uint bytes_per_pixel; /* of the plane's format */
} cl_dma_buf_plane_cldmabuf;

typedef struct cl_dma_buf_layout_cldmabuf {
    cl_uint num_planes; /* 0: fourcc not known */
    cl_dma_buf_plane_cldmabuf planes[3];
} cl_dma_buf_layout_cldmabuf;

static inline void cl_dma_buf_set_plane_cldmabuf(cl_dma_buf_plane_cldmabuf *plane, cl_channel_order order,
                                                 cl_channel_type type, cl_uint wdiv, cl_uint hdiv, cl_uint bpp) {
    plane->format.image_channel_order = order;
    plane->format.image_channel_data_type = type;
    plane->width_divisor = wdiv;
    plane->height_divisor = hdiv;
    plane->bytes_per_pixel = bpp;
}

/* Fills *layout for a DRM fourcc and returns its number of planes (0 when the
 * fourcc is not one of those below).  DRM packed formats are little-endian
 * ([31:0] A:R:G:B for ARGB8888 means bytes B, G, R, A in memory), hence
 * AR24/XR24 -> CL_BGRA and AB24/XB24 -> CL_RGBA.  For X formats the fourth
 * channel is padding: its value is whatever the producer left there.
 * P010 keeps its 10 bits in the high bits of each 16-bit word, so
 * CL_UNORM_INT16 reads it as value / 65535 (multiply by 65535 / 64 / 1023 for
 * the 10-bit value).  Each plane is one import: for a multi-planar frame
 * dup() the fd for the second plane (each successful import owns its fd) and
 * pass the plane's byte offset with CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF. */
static inline cl_uint cl_dma_buf_fourcc_layout_cldmabuf(cl_uint fourcc, cl_dma_buf_layout_cldmabuf *layout) {
    cl_dma_buf_layout_cldmabuf l;
    memset(&l, 0, sizeof l);
    l.num_planes = 1;
    if (fourcc == CL_DRM_FOURCC_CLDMABUF('N', 'V', '1', '2')) {
        l.num_planes = 2;
        cl_dma_buf_set_plane_cldmabuf(&l.planes[0], CL_R, CL_UNORM_INT8, 1, 1, 1);
        cl_dma_buf_set_plane_cldmabuf(&l.planes[1], CL_RG, CL_UNORM_INT8, 2, 2, 2);
    } else if (fourcc == CL_DRM_FOURCC_CLDMABUF('P', '0', '1', '0')) {
        l.num_planes = 2;
        cl_dma_buf_set_plane_cldmabuf(&l.planes[0], CL_R, CL_UNORM_INT16, 1, 1, 2);
        cl_dma_buf_set_plane_cldmabuf(&l.planes[1], CL_RG, CL_UNORM_INT16, 2, 2, 4);
    } else if (fourcc == CL_DRM_FOURCC_CLDMABUF('A', 'R', '2', '4') ||
               fourcc == CL_DRM_FOURCC_CLDMABUF('X', 'R', '2', '4')) {
        cl_dma_buf_set_plane_cldmabuf(&l.planes[0], CL_BGRA, CL_UNORM_INT8, 1, 1, 4);
    } else if (fourcc == CL_DRM_FOURCC_CLDMABUF('A', 'B', '2', '4') ||
               fourcc == CL_DRM_FOURCC_CLDMABUF('X', 'B', '2', '4')) {
        cl_dma_buf_set_plane_cldmabuf(&l.planes[0], CL_RGBA, CL_UNORM_INT8, 1, 1, 4);
    } else if (fourcc == CL_DRM_FOURCC_CLDMABUF('R', '8', ' ', ' ')) {
        cl_dma_buf_set_plane_cldmabuf(&l.planes[0], CL_R, CL_UNORM_INT8, 1, 1, 1);
    } else if (fourcc == CL_DRM_FOURCC_CLDMABUF('G', 'R', '8', '8')) {
        cl_dma_buf_set_plane_cldmabuf(&l.planes[0], CL_RG, CL_UNORM_INT8, 1, 1, 2);
    } else if (fourcc == CL_DRM_FOURCC_CLDMABUF('R', '1', '6', ' ')) {
        cl_dma_buf_set_plane_cldmabuf(&l.planes[0], CL_R, CL_UNORM_INT16, 1, 1, 2);
    } else if (fourcc == CL_DRM_FOURCC_CLDMABUF('G', 'R', '3', '2')) {
        cl_dma_buf_set_plane_cldmabuf(&l.planes[0], CL_RG, CL_UNORM_INT16, 1, 1, 4);
    } else {
        l.num_planes = 0;
    }
    if (layout) *layout = l;
    return l.num_planes;
}

#ifdef __cplusplus
}
#endif

#endif /* CL_EXT_CLDMABUF_H */
