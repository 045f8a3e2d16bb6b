// The scenario of a blitter copy between two imports (k): X of the world's
// dma-buf A and Z of a second dma-buf B, both acquired behind a user event;
// X gets v1, then clEnqueueCopyBuffer(X -> Z) goes to the virtual Gen9's
// blitter (a batch the scheduler runs as a step of its own: the engine in
// manual mode); both released.  A and B end with v1, every word, and the
// layer's copy counter says the blitter ran it (and the set-up's warm-up).
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include <cstdio>
#include <cstring>
#include <optional>

#include "chunks.hpp"
#include "test_dmabufs.hpp"
#include "vgen9_control.hpp"

namespace explore {
namespace {

std::optional<e2e::Dmabuf> second;  // B; one process per schedule

void import_second(World &w, const std::string &name) {
    second = e2e::make_dmabuf(kBytes);
    const int fd = fcntl(second->fd, F_DUPFD_CLOEXEC, 0);
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd), 0};
    cl_int err = CL_OUT_OF_RESOURCES;
    w.mems[name] = clCreateBufferWithProperties(w.context, props, CL_MEM_READ_WRITE, kBytes, nullptr, &err);
    if (err != CL_SUCCESS) {
        close(fd);
        w.fail("import " + name + " of the second dma-buf: " + std::to_string(err));
    }
}

Chunk blit(const std::string &src, const std::string &dst, const std::string &ev) {
    return {"copy " + src + " -> " + dst, [=](World &w) {
                cl_event e = nullptr;
                const cl_int err = clEnqueueCopyBuffer(w.queue, w.mems[src], w.mems[dst], 0, 0, kBytes, 0, nullptr, &e);
                if (err != CL_SUCCESS) w.fail("copy " + src + " -> " + dst + ": " + std::to_string(err));
                w.events[ev] = e;
            }};
}

// One copy between two other imports of A and B, run whole in the set-up:
// the blitter's engine keeps a pool of batch buffers for the process (each
// a GEM object, on the virtual Gen9 a memfd), made by its first copy.
void warm_up(World &w) {
    import(w, "warm A");
    const int fd = fcntl(second->fd, F_DUPFD_CLOEXEC, 0);
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd), 0};
    cl_int err = CL_OUT_OF_RESOURCES;
    cl_mem b = clCreateBufferWithProperties(w.context, props, CL_MEM_READ_WRITE, kBytes, nullptr, &err);
    if (err != CL_SUCCESS) {
        close(fd);
        return w.fail("the warm-up's import of the second dma-buf: " + std::to_string(err));
    }
    cl_mem both[] = {w.mems["warm A"], b};
    err = w.acquire(w.queue, 2, both, 0, nullptr, nullptr);
    if (err == CL_SUCCESS) err = clEnqueueCopyBuffer(w.queue, both[0], b, 0, 0, kBytes, 0, nullptr, nullptr);
    if (err == CL_SUCCESS) err = w.release(w.queue, 2, both, 0, nullptr, nullptr);
    if (err == CL_SUCCESS) err = clFinish(w.queue);
    if (err != CL_SUCCESS) w.fail("the warm-up copy: " + std::to_string(err));
    clReleaseMemObject(b);
    clReleaseMemObject(w.mems["warm A"]);
    w.mems.erase("warm A");
}

// B holds `v`, every word (read through its own mapping and bracket); then
// its fd goes, before the end check counts the fds.
void check_second(World &w, int v) {
    if (!second) return;
    void *view = mmap(nullptr, kBytes, PROT_READ, MAP_SHARED, second->fd, 0);
    if (view == MAP_FAILED) return w.fail("mmap of the second dma-buf failed");
    dma_buf_sync sync{DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ};
    ioctl(second->fd, DMA_BUF_IOCTL_SYNC, &sync);
    const auto *words = static_cast<const uint32_t *>(view);
    size_t wrong = 0, first = kWords;
    for (size_t k = 0; k < kWords; ++k)
        if (words[k] != values[v][k] && wrong++ == 0) first = k;
    if (wrong) {
        char text[200];
        std::snprintf(text, sizeof text, "the copy's target holds %zu words not as expected (word %zu: 0x%08x, want 0x%08x)",
                      wrong, first, words[first], values[v][first]);
        w.fail(text);
    }
    sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
    ioctl(second->fd, DMA_BUF_IOCTL_SYNC, &sync);
    munmap(view, kBytes);
    second.reset();
}

}  // namespace

std::vector<Scenario> blitter_scenarios() {
    Scenario k;
    k.name = "k";
    k.summary = "imports X (dma-buf A) and Z (dma-buf B) acquired behind a user event; write v1 to X, a blitter copy "
                "X -> Z on the virtual Gen9 (its batch a step), release both";
    k.setup = [](World &w) {
        open_world(w);
        if (w.failures().empty()) import(w, "X");
        if (w.failures().empty()) import_second(w, "Z");
        if (!cldmabuf::test::vgen9().set_manual || !cldmabuf::test::vgen9().ready_batches)
            return w.fail("the virtual Gen9's manual engine is not there");
        cldmabuf::test::vgen9().set_manual(1);
        w.facts["gpu manual"] = true;
        if (w.failures().empty()) warm_up(w);
    };
    k.program = [](World &w) {
        note_open_fds(w);  // the set-up's steps all ran: the batch pool is made
        return std::vector<Chunk>{user_event("ue"),
                                  acquire("X", "acqX", "ue"),
                                  acquire("Z", "acqZ", "ue"),
                                  write("X", 1, "w"),
                                  blit("X", "Z", "copy"),
                                  release("X", "relX"),
                                  release("Z", "relZ"),
                                  complete("ue", CL_COMPLETE),
                                  finish({{"acqX", true}, {"acqZ", true}, {"w", true}, {"copy", true},
                                          {"relX", true}, {"relZ", true}},
                                         true),
                                  {"the blitter ran the copy",
                                   [](World &w) {
                                       if (layer_stats(w)[CL_STATS_BLT_COPIES_CLDMABUF] != 2)
                                           w.fail("the copy did not go to the blitter (CL_STATS_BLT_COPIES_CLDMABUF " +
                                                  std::to_string(layer_stats(w)[CL_STATS_BLT_COPIES_CLDMABUF]) + ")");
                                   }},
                                  release_everything()};
    };
    k.check = [](World &w) {
        check_second(w, 1);
        check_end(w, 1);
    };
    return {k};
}

}  // namespace explore
