// cldmabuf-info on the host: PoCL through ocl-icd with the layer, the virtual
// Gen9 (LD_PRELOAD, PCI slot 0000:00:07.0 from meson) as the blitter and as
// the producer of the dma-buf given to --fd.
#include <drm.h>
#include <fcntl.h>
#include <i915_drm.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tools/info/report.hpp"

namespace {

std::string tool() {
    const char *bin = std::getenv("CLDMABUF_INFO_BIN");
    REQUIRE(bin != nullptr);
    return bin;
}

struct Run {
    int code = -1;
    std::string out;
};

// Runs the binary (through sh, with our environment plus `env_prefix`).
Run run_tool(const std::string &args, const std::string &env_prefix = "") {
    Run r;
    const std::string cmd = env_prefix + " '" + tool() + "' " + args + " 2>/dev/null";
    FILE *p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

Run run_in_process(std::vector<std::string> args) {
    args.insert(args.begin(), "cldmabuf-info");
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    Run r;
    std::string err;
    r.code = cldmabuf::info::run_info(static_cast<int>(args.size()), argv.data(), tool(), &r.out, &err);
    r.out += err;
    return r;
}

bool has(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

struct Streams {
    int code = -1;
    std::string out, err;
};

// Runs the binary with stdout and stderr kept apart (stderr through a file).
Streams run_tool_streams(const std::string &args, const std::string &env_prefix = "") {
    char path[] = "/tmp/cldmabuf-info-stderr-XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    Streams s;
    const std::string cmd = env_prefix + " '" + tool() + "' " + args + " 2>'" + path + "'";
    FILE *p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) s.out.append(buf, n);
    const int status = pclose(p);
    s.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (FILE *f = std::fopen(path, "r")) {
        while ((n = fread(buf, 1, sizeof buf, f)) > 0) s.err.append(buf, n);
        std::fclose(f);
    }
    unlink(path);
    return s;
}

// The lines of `text` that are not cldmabuf's own (the layer's "cldmabuf: ",
// its "cldmabuf stats:", the tool's "cldmabuf-info: ").
std::vector<std::string> foreign_lines(const std::string &text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        if (line.rfind("cldmabuf", 0) != 0) out.push_back(line);
        start = end + 1;
    }
    return out;
}

// A dma-buf of the virtual Gen9: GEM_CREATE + PRIME export on its node.
int vgen9_dmabuf(size_t size) {
    const int node = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(node >= 0);
    drm_i915_gem_create create{};
    create.size = size;
    REQUIRE(ioctl(node, DRM_IOCTL_I915_GEM_CREATE, &create) == 0);
    drm_prime_handle prime{};
    prime.handle = create.handle;
    prime.flags = DRM_CLOEXEC | DRM_RDWR;
    REQUIRE(ioctl(node, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime) == 0);
    drm_gem_close gem_close{};
    gem_close.handle = create.handle;
    ioctl(node, DRM_IOCTL_GEM_CLOSE, &gem_close);
    close(node);
    return prime.fd;
}

}  // namespace

TEST_CASE("human output: what the layer adds, the route, the virtual blitter", "[info]") {
    const Run r = run_tool("");
    INFO(r.out);
    CHECK(r.code == cldmabuf::info::kExitOk);
    CHECK(has(r.out, "(loaded)"));
    // Compared with the ICD alone: PoCL 3.1 has no external memory itself.
    CHECK(has(r.out, "added by the layer: cl_khr_external_memory cl_khr_external_memory_dma_buf"));
    CHECK(has(r.out, "the ICD alone: no cl_khr_external_memory_dma_buf"));
    CHECK(has(r.out, "import route: zero-copy (CPU device"));
    CHECK(has(r.out, "blitter: /dev/dri/renderD128 (i915 0x1916 SKL, PCI 0000:00:07.0)"));
    CHECK(has(r.out, "blitter: matched: copies between zero-copy imports go to /dev/dri/renderD128"));
    CHECK(has(r.out, "render nodes: /dev/dri/renderD128 i915 at 0000:00:07.0"));
    CHECK(has(r.out, "verdict: dma-bufs can be imported on"));
}

TEST_CASE("settings change the reported route and blitter", "[info]") {
    const Run r = run_tool("", "CLDMABUF_IMPORT=copy CLDMABUF_BLT=off");
    INFO(r.out);
    CHECK(r.code == cldmabuf::info::kExitOk);
    CHECK(has(r.out, "import route: device copy (CLDMABUF_IMPORT=copy"));
    CHECK(has(r.out, "blitter: none (turned off by CLDMABUF_BLT=off)"));
}

TEST_CASE("settings from the settings file count as the layer reads them, with their source", "[info]") {
    char path[] = "/tmp/cldmabuf-info-settings-XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    const std::string text = "# test\ncldmabuf.import = copy\ncldmabuf.blt = off\ncldmabuf.fence_timeout_ms = soon\n";
    REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    close(fd);
    const Run r = run_tool("", std::string("CLDMABUF_SETTINGS_FILE=") + path);
    unlink(path);
    INFO(r.out);
    CHECK(r.code == cldmabuf::info::kExitOk);
    CHECK(has(r.out, "import route: device copy (CLDMABUF_IMPORT=copy"));
    CHECK(has(r.out, "blitter: none (turned off by CLDMABUF_BLT=off)"));
    CHECK(has(r.out, std::string("CLDMABUF_IMPORT=copy (") + path + ":2)"));
    CHECK(has(r.out, std::string("settings file: ") + path));
    CHECK(has(r.out, "refused: "));
    CHECK(has(r.out, "fence_timeout_ms"));
}

// The ICD's profile (layer/icd/profile.hpp): each platform's facts with
// where they came from; the devices' probe facts are measured on a first
// import, in the application's process, so not here.
TEST_CASE("each platform's and device's profile, with where each fact came from", "[info][profile]") {
    const Run r = run_tool("--no-egl");
    INFO(r.out);
    CHECK(r.code == cldmabuf::info::kExitOk);
    CHECK(has(r.out, "profile: ICD PoCL (asked of the ICD), OpenCL 3.0 (asked of the ICD) for its slots"));
    CHECK(has(r.out, "failed host steps: side table (chosen from the ICD's identity): PoCL:"));
    CHECK(has(r.out, "its own semaphores: no (asked of the ICD)"));
    CHECK(has(r.out, "its own cl_khr_egl_image: no (asked of the ICD), cl_khr_gl_sharing: no (asked of the ICD)"));
    CHECK(has(r.out, "marker watch: 50 us, at least 64 looks (chosen from the ICD's identity)"));
    CHECK(has(r.out, "profile: not measured in this process (zero-copy, image routes and staging are measured"));
    const Run j = run_tool("--json --no-egl");
    CHECK(has(j.out, "\"failed_host_steps\": {"));
    CHECK(has(j.out, "\"from\": \"asked of the ICD\""));
}

TEST_CASE("JSON output carries the same facts", "[info]") {
    const Run r = run_tool("--json --no-egl");
    INFO(r.out);
    CHECK(r.code == cldmabuf::info::kExitOk);
    REQUIRE(!r.out.empty());
    CHECK(r.out.front() == '{');
    CHECK(has(r.out, "\"loaded\": true"));
    CHECK(has(r.out, "\"compared_with_icd_only\": true"));
    CHECK(has(r.out, "\"route\": \"zero-copy\""));
    CHECK(has(r.out, "\"node\": \"/dev/dri/renderD128\""));
    CHECK(has(r.out, "\"pci\": \"0000:00:07.0\""));
    CHECK(has(r.out, "\"can_import\": true"));
    CHECK(has(r.out, "\"reason\": \"not probed (--no-egl)\""));
    // Balanced, i.e. one complete document.
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < r.out.size(); ++i) {
        const char c = r.out[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') in_string = true;
        else if (c == '{' || c == '[') ++depth;
        else if (c == '}' || c == ']') --depth;
    }
    CHECK(depth == 0);
}

TEST_CASE("exit codes: no layer, bad arguments", "[info]") {
    const Run none = run_tool("--no-egl --layer /nonexistent/libcldmabuf.so");
    INFO(none.out);
    CHECK(none.code == cldmabuf::info::kExitCannotImport);
    CHECK(has(none.out, "NOT loaded: /nonexistent/libcldmabuf.so does not exist"));
    CHECK(has(none.out, "verdict: nothing can import dma-bufs"));
    CHECK(run_tool("--bogus").code == cldmabuf::info::kExitUsage);
}

// The probes load Mesa's EGL (and through it Iris, which tries the virtual
// i915 node and gives up loudly) and libva (which walks its driver list):
// their messages are theirs, not findings, and stay hidden unless -v asks
// for them.  The layer's own lines still come through.
TEST_CASE("stderr carries only cldmabuf's own lines; -v keeps the libraries' messages", "[info][quiet]") {
    const Streams quiet = run_tool_streams("", "CLDMABUF_LOG=info");
    INFO(quiet.err);
    CHECK(quiet.code == cldmabuf::info::kExitOk);
    CHECK(has(quiet.out, "verdict: dma-bufs can be imported on"));
    CHECK(foreign_lines(quiet.err).empty());
    for (const char *chatter : {"libva info", "va_openDriver", "libEGL warning", "dri2", "MESA:", "Kernel is too old"})
        CHECK_FALSE(has(quiet.err, chatter));
    // The layer's log, written while the probes ran, is not lost.
    CHECK(has(quiet.err, "cldmabuf: info: "));

    const Streams verbose = run_tool_streams("-v");
    INFO(verbose.err);
    CHECK(verbose.code == cldmabuf::info::kExitOk);
    CHECK(has(verbose.out, "verdict: dma-bufs can be imported on"));
    // vaInitialize on the virtual node always says libva's version.
    if (!has(verbose.out, "libva / libva-drm cannot be loaded")) CHECK(has(verbose.err, "libva info: "));
    CHECK(run_tool("--verbose --json --no-egl --no-va").code == cldmabuf::info::kExitOk);
}

TEST_CASE("--fd on a virtual Gen9 dma-buf: size, import route, fd untouched", "[info][fd]") {
    const int fd = vgen9_dmabuf(64 * 1024);
    const Run r = run_in_process({"--json", "--no-egl", "--fd", std::to_string(fd)});
    INFO(r.out);
    CHECK(r.code == cldmabuf::info::kExitOk);
    CHECK(has(r.out, "\"is_dma_buf\": true"));
    CHECK(has(r.out, "\"size\": 65536"));
    CHECK(has(r.out, "\"imported\": true"));
    CHECK(has(r.out, "\"imported_on_devices\": 1"));
    // The tool imported a duplicate: the caller's fd is still open and a dma-buf.
    CHECK(fcntl(fd, F_GETFD) >= 0);
    const Run text = run_in_process({"--no-egl", "--fd", std::to_string(fd)});
    CHECK(has(text.out, "fd " + std::to_string(fd) + ": dma-buf, 65536 bytes"));
    CHECK(has(text.out, "fd import: ok, zero-copy"));
    close(fd);
}

TEST_CASE("--fd on something that is not a dma-buf is refused with the reason", "[info][fd]") {
    const int mfd = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
    REQUIRE(mfd >= 0);
    REQUIRE(ftruncate(mfd, 4096) == 0);
    const Run r = run_in_process({"--no-egl", "--fd", std::to_string(mfd)});
    INFO(r.out);
    CHECK(r.code == cldmabuf::info::kExitFdRefused);
    CHECK(has(r.out, "refused: fd " + std::to_string(mfd) + " is not a dma-buf (filesystem magic"));
    // The same fd named through /proc (pidfd_getfd), as for another process.
    const std::string path = "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(mfd);
    const Run p = run_in_process({"--json", "--no-egl", "--fd", path});
    INFO(p.out);
    CHECK(p.code == cldmabuf::info::kExitFdRefused);
    CHECK(has(p.out, "\"is_dma_buf\": false"));
    CHECK(has(p.out, "is not a dma-buf"));
    close(mfd);
    const Run bad = run_in_process({"--no-egl", "--fd", "not-an-fd"});
    CHECK(bad.code == cldmabuf::info::kExitFdRefused);
    CHECK(has(bad.out, "expected a number or /proc/PID/fd/N"));
}
