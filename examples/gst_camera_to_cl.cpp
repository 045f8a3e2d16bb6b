// A GStreamer pipeline handing dma-bufs to OpenCL, zero-copy: copy this.
//
//   gst-camera-to-cl [/dev/videoN] [frames]
//
// The pipeline is an ordinary one a media application already has:
//
//   v4l2src device=/dev/videoN io-mode=dmabuf num-buffers=N
//     ! video/x-raw,format=YUY2,width=640,height=480 ! appsink
//
// With io-mode=dmabuf every GstBuffer's memory is a dma-buf (GstDmaBufMemory).
// The application never sees V4L2: it takes the fd from the GstMemory, and
// imports it with the standard cl_khr_external_memory_dma_buf properties,
// once per distinct dma-buf (the pool recycles a few buffers; the fd's inode
// names the buffer whichever fd GStreamer hands out), as a buffer and as a
// 2D image with the stride GStreamer reports (GstVideoMeta, else the caps).
// Per sample: acquire, one kernel per import computes each row's luma sum,
// release; the CPU's view of the same sample (gst_buffer_map) is the check.
//
// Needs an ICD with cl_khr_external_memory_dma_buf: any OpenCL ICD with
// OPENCL_LAYERS=libcldmabuf.so.  CL_EXAMPLE_PLATFORM=<substring> picks the
// platform.  Exit 0 when every sample is right on both imports.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <fcntl.h>
#include <gst/allocators/gstdmabuf.h>
#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "yuyv_luma.hpp"

#ifndef CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR
#define CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR 0x2067
#endif

namespace {

constexpr int kWidth = 640, kHeight = 480;
// A camera that produces nothing for this long is dead (vivid runs at 30 fps).
constexpr GstClockTime kSampleTimeout = 5 * GST_SECOND;

#define CL_CHECK(call)                                                             \
    do {                                                                           \
        cl_int e_ = (call);                                                        \
        if (e_ != CL_SUCCESS) {                                                    \
            std::fprintf(stderr, "gst: %s failed: %d\n", #call, e_);               \
            std::exit(1);                                                          \
        }                                                                          \
    } while (0)

// One dma-buf of the pipeline's pool, imported twice (a successful import owns
// its fd, so each import gets its own duplicate of GStreamer's fd).
struct Imported {
    cl_mem buffer = nullptr, image = nullptr;
};

Imported import_dmabuf(cl_context ctx, int gst_fd, size_t size, int stride) {
    Imported out;
    cl_int err;
    const int fd_buf = fcntl(gst_fd, F_DUPFD_CLOEXEC, 0), fd_img = fcntl(gst_fd, F_DUPFD_CLOEXEC, 0);
    if (fd_buf < 0 || fd_img < 0) {
        std::perror("gst: dup");
        std::exit(1);
    }
    cl_mem_properties bprops[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, (cl_mem_properties)fd_buf, 0};
    out.buffer = clCreateBufferWithProperties(ctx, bprops, CL_MEM_READ_ONLY, size, nullptr, &err);
    CL_CHECK(err);
    cl_mem_properties iprops[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, (cl_mem_properties)fd_img, 0};
    const cl_image_format f{CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = kWidth / 2;  // one texel per Y0 U Y1 V pair
    desc.image_height = kHeight;
    desc.image_row_pitch = static_cast<size_t>(stride);
    out.image = clCreateImageWithProperties(ctx, iprops, CL_MEM_READ_ONLY, &f, &desc, nullptr, &err);
    CL_CHECK(err);
    return out;
}

}  // namespace

int main(int argc, char **argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    gst_init(&argc, &argv);
    const std::string node = argc > 1 ? argv[1] : yuyv::find_camera();
    const unsigned frames = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 8;
    if (node.empty()) {
        std::printf("gst: no capture node (load the test camera: modprobe vivid)\n");
        return 1;
    }

    // ---- OpenCL: a device that imports dma-bufs
    yuyv::ClDevice dev = yuyv::pick_dmabuf_device("gst");
    if (!dev.device) return 1;
    auto acquire = reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(dev.platform, "clEnqueueAcquireExternalMemObjectsKHR"));
    auto release = reinterpret_cast<clEnqueueReleaseExternalMemObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(dev.platform, "clEnqueueReleaseExternalMemObjectsKHR"));
    if (!acquire || !release) {
        std::printf("gst: no clEnqueueAcquire/ReleaseExternalMemObjectsKHR\n");
        return 1;
    }
    cl_int err;
    cl_context ctx = clCreateContext(nullptr, 1, &dev.device, nullptr, nullptr, &err);
    CL_CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev.device, nullptr, &err);
    CL_CHECK(err);
    yuyv::LumaKernels k = yuyv::build_luma_kernels(ctx, dev.device, "gst");
    cl_mem sums_buf = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, kHeight * sizeof(cl_uint), nullptr, &err);
    CL_CHECK(err);
    cl_mem sums_img = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, kHeight * sizeof(cl_uint), nullptr, &err);
    CL_CHECK(err);

    // ---- the pipeline
    const std::string desc = "v4l2src device=" + node + " io-mode=dmabuf num-buffers=" + std::to_string(frames) +
                             " ! video/x-raw,format=YUY2,width=" + std::to_string(kWidth) +
                             ",height=" + std::to_string(kHeight) + " ! appsink name=sink sync=false max-buffers=2";
    GError *gerr = nullptr;
    GstElement *pipeline = gst_parse_launch(desc.c_str(), &gerr);
    if (!pipeline) {
        std::printf("gst: cannot build the pipeline: %s\n", gerr ? gerr->message : "?");
        return 1;
    }
    GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
    std::printf("pipeline: %s\n", desc.c_str());
    if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        std::printf("gst: the pipeline does not start\n");
        return 1;
    }

    std::map<ino_t, Imported> imports;  // per distinct dma-buf of the pool
    unsigned good = 0, seen = 0;
    std::vector<cl_uint> gpu_buf(kHeight), gpu_img(kHeight), cpu(kHeight);
    const cl_uint width = kWidth;
    for (; seen < frames; ++seen) {
        GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), kSampleTimeout);
        if (!sample) {
            std::printf("sample %u: none within 5 s (end of stream or a dead camera)\n", seen);
            break;
        }
        GstBuffer *gbuf = gst_sample_get_buffer(sample);
        GstVideoInfo info;
        if (!gst_video_info_from_caps(&info, gst_sample_get_caps(sample))) {
            std::printf("gst: the sample's caps are not raw video\n");
            return 1;
        }
        // The stride the producer really uses: its video meta, else the caps' default.
        const GstVideoMeta *meta = gst_buffer_get_video_meta(gbuf);
        const int stride = meta ? meta->stride[0] : GST_VIDEO_INFO_PLANE_STRIDE(&info, 0);
        GstMemory *mem = gst_buffer_peek_memory(gbuf, 0);
        if (gst_buffer_n_memory(gbuf) != 1 || !gst_is_dmabuf_memory(mem) || mem->offset != 0) {
            std::printf("gst: sample %u is not one whole dma-buf (is v4l2src in io-mode=dmabuf?)\n", seen);
            return 1;
        }
        const int fd = gst_dmabuf_memory_get_fd(mem);  // GStreamer's: never closed here
        struct stat st{};
        if (fstat(fd, &st) != 0) {
            std::perror("gst: fstat");
            return 1;
        }
        auto it = imports.find(st.st_ino);
        if (it == imports.end()) {
            it = imports.emplace(st.st_ino, import_dmabuf(ctx, fd, gst_memory_get_sizes(mem, nullptr, nullptr),
                                                          stride)).first;
            std::printf("imported dma-buf %zu of the pool (inode %lu, stride %d) as a buffer and a %dx%d RGBA8UI "
                        "image\n", imports.size(), static_cast<unsigned long>(st.st_ino), stride, kWidth / 2,
                        kHeight);
        }
        const Imported &imp = it->second;

        cl_mem objs[] = {imp.buffer, imp.image};
        CL_CHECK(acquire(q, 2, objs, 0, nullptr, nullptr));
        const cl_uint pitch = static_cast<cl_uint>(stride);
        CL_CHECK(clSetKernelArg(k.rows_buffer, 0, sizeof(cl_mem), &imp.buffer));
        CL_CHECK(clSetKernelArg(k.rows_buffer, 1, sizeof(cl_uint), &pitch));
        CL_CHECK(clSetKernelArg(k.rows_buffer, 2, sizeof(cl_uint), &width));
        CL_CHECK(clSetKernelArg(k.rows_buffer, 3, sizeof(cl_mem), &sums_buf));
        CL_CHECK(clSetKernelArg(k.rows_image, 0, sizeof(cl_mem), &imp.image));
        CL_CHECK(clSetKernelArg(k.rows_image, 1, sizeof(cl_mem), &sums_img));
        const size_t rows = kHeight;
        CL_CHECK(clEnqueueNDRangeKernel(q, k.rows_buffer, 1, nullptr, &rows, nullptr, 0, nullptr, nullptr));
        CL_CHECK(clEnqueueNDRangeKernel(q, k.rows_image, 1, nullptr, &rows, nullptr, 0, nullptr, nullptr));
        CL_CHECK(release(q, 2, objs, 0, nullptr, nullptr));
        CL_CHECK(clEnqueueReadBuffer(q, sums_buf, CL_FALSE, 0, kHeight * sizeof(cl_uint), gpu_buf.data(), 0,
                                     nullptr, nullptr));
        CL_CHECK(clEnqueueReadBuffer(q, sums_img, CL_TRUE, 0, kHeight * sizeof(cl_uint), gpu_img.data(), 0,
                                     nullptr, nullptr));

        // The reference: the same sample through GStreamer's own CPU mapping.
        GstMapInfo map;
        if (!gst_buffer_map(gbuf, &map, GST_MAP_READ)) {
            std::printf("gst: cannot map sample %u\n", seen);
            return 1;
        }
        const uint64_t total = yuyv::luma_rows(map.data, static_cast<uint32_t>(stride), kWidth, kHeight, cpu.data());
        gst_buffer_unmap(gbuf, &map);
        unsigned bad_buf = 0, bad_img = 0;
        for (int y = 0; y < kHeight; ++y) {
            bad_buf += gpu_buf[y] != cpu[y];
            bad_img += gpu_img[y] != cpu[y];
        }
        const bool ok = bad_buf == 0 && bad_img == 0 && total > 0;
        good += ok;
        std::printf("sample %u (pts %.3f s): luma sum %llu, buffer kernel %s, image kernel %s\n", seen,
                    GST_BUFFER_PTS_IS_VALID(gbuf) ? GST_BUFFER_PTS(gbuf) / 1e9 : -1.0,
                    static_cast<unsigned long long>(total), bad_buf ? "WRONG" : "ok", bad_img ? "WRONG" : "ok");
        gst_sample_unref(sample);
    }

    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(sink);
    gst_object_unref(pipeline);
    for (auto &[ino, imp] : imports) {
        clReleaseMemObject(imp.buffer);
        clReleaseMemObject(imp.image);
    }
    clReleaseMemObject(sums_buf);
    clReleaseMemObject(sums_img);
    yuyv::release_luma_kernels(k);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    std::printf("gst: %u/%u samples correct, %zu dma-bufs imported once each\n", good, frames, imports.size());
    return good == frames ? 0 : 1;
}
