// bench-import: what a dma-buf import costs through the layer, against the
// copy route an application has without cl_khr_external_memory_dma_buf
// (mmap the dma-buf, clCreateBuffer(CL_MEM_COPY_HOST_PTR), munmap).
//
// Run with the layer enabled (OPENCL_LAYERS=.../libcldmabuf.so).  The dma-buf
// source is CLDMABUF_TEST_DMABUF=heap|udmabuf|vgem|sim as in the e2e tests;
// "sim" needs LD_PRELOAD=.../libvgen9.so (its dma-bufs are memfds).
//
//   bench-import [--reps N] [--budget-ms MS] [--no-stats] [--data FILE]
//   bench-import --pool [--rounds N]
//
// --pool: a producer's pool (4 buffers of an NV12 frame's size, 1080p and
// 4K), each imported again round after round as a pipeline does (import +
// acquire + release + clFinish + clReleaseMemObject), against the ICD's own
// buffer over host memory of the same size (clCreateBuffer(USE_HOST_PTR) +
// two markers + clFinish + release), alternating round by round in one
// process; medians after 5 warm-up rounds.  It also prints the layer's
// round by call (import, acquire, release, clFinish, clReleaseMemObject):
// which call holds the time on an ICD that misses (NVIDIA).
//
// --data writes the table for bench/plot: size_bytes import_us copy_us memcpy_us.
//
// Prints a table of medians and RATIO lines (bench/run-benchmarks greps
// them).  "host bytes copied" comes from a child run of this program with
// CLDMABUF_STATS=1 (--stats-child), whose layer prints its counters at exit.
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cl_fixture.hpp"
#include "test_dmabufs.hpp"

extern char **environ;

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t KiB = 1024, MiB = 1024 * KiB;
const size_t sizes[] = {4 * KiB, 64 * KiB, 1 * MiB, 16 * MiB, 64 * MiB, 256 * MiB};

double us_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string size_name(size_t s) {
    return s >= MiB ? std::to_string(s / MiB) + " MiB" : std::to_string(s / KiB) + " KiB";
}

void check(cl_int err, const char *what) {
    if (err != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(err));
}

// Import a dup of the dma-buf (the import owns the fd it is given) and release it.
double import_once(const e2e::ClEnv &env, const e2e::Dmabuf &buf, size_t size) {
    int fd = buf.dup_fd();
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd), 0};
    cl_int err = CL_SUCCESS;
    auto t0 = Clock::now();
    cl_mem mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, size, nullptr, &err);
    if (!mem) {
        close(fd);
        check(err, "clCreateBufferWithProperties(dma-buf)");
    }
    check(clReleaseMemObject(mem), "clReleaseMemObject");
    return us_since(t0);
}

// What an application does today: map the dma-buf, let the ICD copy it.
double copy_once(const e2e::ClEnv &env, const e2e::Dmabuf &buf, size_t size) {
    auto t0 = Clock::now();
    void *map = mmap(nullptr, size, PROT_READ, MAP_SHARED, buf.fd, 0);
    if (map == MAP_FAILED) throw std::runtime_error("mmap of the dma-buf failed");
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(env.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, size, map, &err);
    munmap(map, size);
    if (!mem) check(err, "clCreateBuffer(COPY_HOST_PTR)");
    check(clReleaseMemObject(mem), "clReleaseMemObject");
    return us_since(t0);
}

// Lower bound of any copy route: memcpy of the (resident) dma-buf contents
// into memory that is already faulted in -- no allocation, no first touch.
double memcpy_floor_once(const e2e::Dmabuf &buf, size_t size, char *dst) {
    void *map = mmap(nullptr, size, PROT_READ, MAP_SHARED, buf.fd, 0);
    if (map == MAP_FAILED) throw std::runtime_error("mmap of the dma-buf failed");
    volatile char touch = 0;
    for (size_t off = 0; off < size; off += 4096) touch = touch + static_cast<const char *>(map)[off];  // fault in
    auto t0 = Clock::now();
    std::memcpy(dst, map, size);
    asm volatile("" ::"r"(dst) : "memory");
    double us = us_since(t0);
    munmap(map, size);
    return us;
}

// Acquire + release with no fence pending, to completion.
double acquire_release_once(const e2e::ClEnv &env, cl_mem mem) {
    auto t0 = Clock::now();
    check(env.acquire(env.queue, 1, &mem, 0, nullptr, nullptr), "clEnqueueAcquireExternalMemObjectsKHR");
    check(env.release(env.queue, 1, &mem, 0, nullptr, nullptr), "clEnqueueReleaseExternalMemObjectsKHR");
    check(clFinish(env.queue), "clFinish");
    return us_since(t0);
}

// Repeat `fn` at least `min_reps` times, up to `max_reps` or until the time
// budget is spent; return the median.
template <typename Fn>
double measure(Fn fn, int min_reps, int max_reps, double budget_us, int *reps_done) {
    for (int i = 0; i < 2; ++i) fn();  // warm-up: first-touch, allocator, caches
    std::vector<double> t;
    double spent = 0;
    while ((int)t.size() < max_reps && ((int)t.size() < min_reps || spent < budget_us)) {
        t.push_back(fn());
        spent += t.back();
    }
    *reps_done = (int)t.size();
    return median(t);
}

void fill(const e2e::Dmabuf &buf) {
    void *p = mmap(nullptr, buf.size, PROT_READ | PROT_WRITE, MAP_SHARED, buf.fd, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap for fill failed");
    std::memset(p, 0x5a, buf.size);  // real content: every page resident
    munmap(p, buf.size);
}

cl_mem import_keep(const e2e::ClEnv &env, const e2e::Dmabuf &buf) {
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                       static_cast<cl_mem_properties>(buf.dup_fd()), 0};
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, buf.size, nullptr, &err);
    check(err, "clCreateBufferWithProperties(dma-buf)");
    return mem;
}

// --stats-child: exercise every path once per size with CLDMABUF_STATS=1.
int stats_child() {
    e2e::ClEnv env;
    for (size_t s : sizes) {
        e2e::Dmabuf buf = e2e::make_dmabuf(s);
        import_once(env, buf, s);
        cl_mem mem = import_keep(env, buf);
        acquire_release_once(env, mem);
        clReleaseMemObject(mem);
    }
    return 0;
}

// Run ourselves with --stats-child and CLDMABUF_STATS=1; parse host_bytes_copied.
long long host_bytes_copied(std::string *line_out) {
    int pipefd[2];
    if (pipe(pipefd) != 0) return -1;
    std::vector<std::string> envs;
    for (char **e = environ; *e; ++e)
        if (std::strncmp(*e, "CLDMABUF_STATS=", 15) != 0) envs.emplace_back(*e);
    envs.emplace_back("CLDMABUF_STATS=1");
    std::vector<char *> envp;
    for (auto &e : envs) envp.push_back(e.data());
    envp.push_back(nullptr);
    char self[] = "/proc/self/exe", flag[] = "--stats-child";
    char *argv[] = {self, flag, nullptr};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv, envp.data());
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    if (rc != 0) {
        close(pipefd[0]);
        return -1;
    }
    std::string err;
    char chunk[4096];
    for (ssize_t n; (n = read(pipefd[0], chunk, sizeof chunk)) > 0;) err.append(chunk, n);
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    size_t at = err.rfind("cldmabuf stats:");
    if (at == std::string::npos) {
        std::fprintf(stderr, "bench-import: the stats child printed no summary (exit %d); stderr:\n%s\n",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1, err.c_str());
        return -1;
    }
    *line_out = err.substr(at, err.find('\n', at) - at);
    size_t k = line_out->find("host_bytes_copied=");
    if (k == std::string::npos) return -1;
    return std::atoll(line_out->c_str() + k + 18);
}

const char *verdict(bool ok) { return ok ? "met" : "MISS"; }

int pooled_reimport(int rounds) {
    e2e::ClEnv env;
    struct Frame {
        const char *name;
        size_t bytes;
    };
    for (const Frame &f : {Frame{"1080p", 1920 * 1080 * 3 / 2}, Frame{"4K", 3840 * 2160 * 3 / 2}}) {
        std::vector<e2e::Dmabuf> pool;
        for (int i = 0; i < 4; ++i) {
            pool.push_back(e2e::make_dmabuf(f.bytes));
            fill(pool.back());
        }
        std::vector<char> host(f.bytes + 4096);
        void *base = reinterpret_cast<void *>((uintptr_t(host.data()) + 4095) & ~uintptr_t{4095});
        std::vector<double> layer_us, floor_us, phase_us[5];
        for (int r = 0; r < rounds + 5; ++r) {
            const e2e::Dmabuf &buf = pool[r % pool.size()];
            const int fd = buf.dup_fd();
            const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd),
                                               0};
            cl_int err = CL_SUCCESS;
            auto t0 = Clock::now();
            double at[5];
            cl_mem mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, f.bytes, nullptr, &err);
            check(err, "clCreateBufferWithProperties(dma-buf)");
            at[0] = us_since(t0);
            check(env.acquire(env.queue, 1, &mem, 0, nullptr, nullptr), "acquire");
            at[1] = us_since(t0);
            check(env.release(env.queue, 1, &mem, 0, nullptr, nullptr), "release");
            at[2] = us_since(t0);
            check(clFinish(env.queue), "clFinish");
            at[3] = us_since(t0);
            check(clReleaseMemObject(mem), "clReleaseMemObject");
            const double layer = us_since(t0);
            at[4] = layer;
            t0 = Clock::now();
            cl_mem own = clCreateBuffer(env.context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, f.bytes, base, &err);
            check(err, "clCreateBuffer(USE_HOST_PTR)");
            check(clEnqueueMarkerWithWaitList(env.queue, 0, nullptr, nullptr), "marker");
            check(clEnqueueMarkerWithWaitList(env.queue, 0, nullptr, nullptr), "marker");
            check(clFinish(env.queue), "clFinish");
            check(clReleaseMemObject(own), "clReleaseMemObject");
            const double icd = us_since(t0);
            if (r >= 5) {
                layer_us.push_back(layer);
                floor_us.push_back(icd);
                for (int k = 0; k < 5; ++k) phase_us[k].push_back(at[k] - (k ? at[k - 1] : 0));
            }
        }
        const double lm = median(layer_us), fm = median(floor_us), ratio = fm > 0 ? lm / fm : 0;
        // Where the layer's round goes: each call's own median.
        std::printf("pooled re-import, %s, the layer's round by call (medians, us): import %.1f, acquire %.1f, "
                    "release %.1f, clFinish %.1f, clReleaseMemObject %.1f\n",
                    f.name, median(phase_us[0]), median(phase_us[1]), median(phase_us[2]), median(phase_us[3]),
                    median(phase_us[4]));
        std::printf("pooled re-import, %s NV12 frame (%zu bytes, pool of 4, %d rounds): import+acquire+release+"
                    "release %.1f us, ICD's own buffer %.1f us\n",
                    f.name, f.bytes, rounds, lm, fm);
        std::printf("RATIO reimport/%s = %.2f (vs the ICD's own buffer over host memory; target <= 1.2) %s\n", f.name,
                    ratio, verdict(ratio <= 1.2));
        std::fflush(stdout);
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    int max_reps = 200;
    double budget_ms = 1500;
    bool want_stats = true;
    const char *data = nullptr;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--stats-child") {
            try {
                return stats_child();
            } catch (const std::exception &e) {
                std::fprintf(stderr, "bench-import --stats-child: %s\n", e.what());
                return 1;
            }
        } else if (a == "--pool") {
            int rounds = 300;
            for (int j = i + 1; j + 1 < argc; ++j)
                if (std::string(argv[j]) == "--rounds") rounds = std::atoi(argv[j + 1]);
            try {
                return pooled_reimport(rounds);
            } catch (const std::exception &e) {
                std::fprintf(stderr, "bench-import --pool: %s\n", e.what());
                return 1;
            }
        } else if (a == "--reps" && i + 1 < argc) {
            max_reps = std::atoi(argv[++i]);
        } else if (a == "--budget-ms" && i + 1 < argc) {
            budget_ms = std::atof(argv[++i]);
        } else if (a == "--no-stats") {
            want_stats = false;
        } else if (a == "--data" && i + 1 < argc) {
            data = argv[++i];
        } else {
            std::fprintf(stderr, "usage: bench-import [--reps N] [--budget-ms MS] [--no-stats] [--data FILE] | "
                                 "--pool [--rounds N]\n");
            return 2;
        }
    }
    if (!e2e::layer_enabled()) {
        std::fprintf(stderr, "bench-import: OPENCL_LAYERS is not set; the layer must be enabled\n");
        return 2;
    }
    if (!e2e::have_dmabuf()) {
        std::fprintf(stderr, "bench-import: no dma-buf source (set CLDMABUF_TEST_DMABUF; 'sim' needs "
                             "LD_PRELOAD=libvgen9.so)\n");
        return 2;
    }
    try {
        e2e::ClEnv env;
        if (!env.acquire || !env.release) throw std::runtime_error("acquire/release entry points missing");
        std::printf("bench-import: platform \"%s\", device \"%s\", dma-buf source %s%s\n", env.platform_name.c_str(),
                    e2e::device_string(env.device, CL_DEVICE_NAME).c_str(), e2e::dmabuf_source().c_str(),
                    e2e::dmabuf_source() == "sim" ? " (virtual Gen9 PRIME export = memfd)" : "");
        std::printf("medians over N repetitions (after 2 warm-ups); times in microseconds\n\n");
        std::printf("%-9s %12s %6s %14s %6s %10s %12s %12s %10s\n", "size", "import_us", "N", "copy_route_us", "N",
                    "copy/imp", "copy_GB/s", "memcpy_us", "memcpy/imp");
        std::vector<double> imp(std::size(sizes)), cpy(std::size(sizes)), flo(std::size(sizes));
        std::vector<char> floor_dst(sizes[std::size(sizes) - 1], 1);  // resident destination
        // The sizes the source could make: udmabuf caps a buffer at
        // udmabuf.size_limit_mb (64 MiB by default), so on Debian's arm64
        // kernel (no dma-heap) the largest is left out, said, and the
        // ratios use the largest measured.
        size_t measured = 0;
        for (size_t i = 0; i < std::size(sizes); ++i) {
            size_t s = sizes[i];
            e2e::Dmabuf buf;
            try {
                buf = e2e::make_dmabuf(s);
            } catch (const std::exception &e) {
                std::printf("%-9s (the source cannot make one: %s; larger sizes left out)\n", size_name(s).c_str(),
                            e.what());
                break;
            }
            measured = i + 1;
            fill(buf);
            int ni = 0, nc = 0;
            imp[i] = measure([&] { return import_once(env, buf, s); }, 15, max_reps, budget_ms * 1000, &ni);
            cpy[i] = measure([&] { return copy_once(env, buf, s); }, 7, max_reps, budget_ms * 1000, &nc);
            int nf = 0;
            flo[i] = measure([&] { return memcpy_floor_once(buf, s, floor_dst.data()); }, 7, max_reps, budget_ms * 500, &nf);
            std::printf("%-9s %12.1f %6d %14.1f %6d %10.1f %12.2f %12.1f %10.1f\n", size_name(s).c_str(), imp[i], ni,
                        cpy[i], nc, cpy[i] / imp[i], s / (cpy[i] * 1e3), flo[i], flo[i] / imp[i]);
            std::fflush(stdout);
        }

        if (data) {
            FILE *f = std::fopen(data, "w");
            if (!f) throw std::runtime_error(std::string("cannot write ") + data);
            std::fprintf(f, "# %s: size_bytes import_us copy_route_us memcpy_floor_us\n", e2e::dmabuf_source().c_str());
            for (size_t i = 0; i < measured; ++i)
                std::fprintf(f, "%zu %.2f %.2f %.2f\n", sizes[i], imp[i], cpy[i], flo[i]);
            std::fclose(f);
        }

        std::printf("\n%-9s %12s %6s\n", "size", "acq+rel_us", "N");
        std::vector<double> ar;
        for (size_t s : {4 * KiB, 64 * MiB}) {
            e2e::Dmabuf buf = e2e::make_dmabuf(s);
            cl_mem mem = import_keep(env, buf);
            int n = 0;
            ar.push_back(measure([&] { return acquire_release_once(env, mem); }, 15, max_reps, budget_ms * 1000, &n));
            std::printf("%-9s %12.1f %6d\n", size_name(s).c_str(), ar.back(), n);
            clReleaseMemObject(mem);
        }

        if (measured < 5) throw std::runtime_error("the source made no buffer of 64 MiB");
        const size_t top = measured - 1;
        const double r_scale = imp[top] / imp[0];
        const double r_copy = cpy[4] / imp[4];
        std::string top_name = size_name(sizes[top]);
        top_name.erase(std::remove(top_name.begin(), top_name.end(), ' '), top_name.end());  // "256MiB"
        std::printf("\nRATIO import_%s/import_4KiB = %.2f (target <= 2) %s\n", top_name.c_str(), r_scale,
                    verdict(r_scale <= 2));
        std::printf("RATIO copy_route/import at 64 MiB = %.1f (target >= 100) %s\n", r_copy, verdict(r_copy >= 100));
        std::printf("RATIO memcpy_floor/import at 64 MiB = %.1f (copy route without allocation/first-touch cost; "
                    "target >= 100) %s\n", flo[4] / imp[4], verdict(flo[4] / imp[4] >= 100));
        std::printf("VALUE acquire+release (no fence, 4 KiB) = %.1f us\n", ar[0]);
        std::printf("VALUE acquire+release (no fence, 64 MiB) = %.1f us\n", ar[1]);
        if (want_stats) {
            std::fflush(stdout);
            std::string line;
            long long copied = host_bytes_copied(&line);
            if (copied < 0) {
                std::printf("VALUE host_bytes_copied = unknown (no stats summary)\n");
                return 1;
            }
            std::printf("VALUE host_bytes_copied = %lld (target 0) %s\n", copied, verdict(copied == 0));
            std::printf("  child: %s\n", line.c_str());
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench-import: %s\n", e.what());
        return 1;
    }
    return 0;
}
