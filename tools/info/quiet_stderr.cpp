#include "tools/info/quiet_stderr.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace cldmabuf::info {
namespace {

// The capture in progress, for the signal handler and the atexit hook: they
// may run on any thread at any point, so plain values and async-signal-safe
// calls only.
volatile sig_atomic_t g_active = 0;
int g_real = -1;     // the real stderr, duplicated
int g_capture = -1;  // the anonymous file fd 2 points at meanwhile

// Signals that end the process with something worth seeing on stderr: a
// driver's crash or abort, and the user giving up on a hang.
constexpr int kEnding[] = {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP};
constexpr size_t kEndings = sizeof kEnding / sizeof *kEnding;
struct sigaction g_before[kEndings];
bool g_caught[kEndings];

void write_all(int fd, const char *p, size_t n) {
    while (n) {
        const ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        p += w;
        n -= static_cast<size_t>(w);
    }
}

// The process is ending inside the window: fd 2 back, and all of it there,
// unfiltered, since the libraries' words may say why.  Async-signal-safe.
void spill_all() {
    if (!g_active) return;
    g_active = 0;
    dup2(g_real, STDERR_FILENO);
    char buf[4096];
    off_t at = 0;
    for (ssize_t n; (n = pread(g_capture, buf, sizeof buf, at)) > 0; at += n)
        write_all(STDERR_FILENO, buf, static_cast<size_t>(n));
}

void restore_signals() {
    for (size_t i = 0; i < kEndings; ++i)
        if (g_caught[i]) {
            sigaction(kEnding[i], &g_before[i], nullptr);
            g_caught[i] = false;
        }
}

void on_ending_signal(int sig) {
    const int saved_errno = errno;
    spill_all();
    restore_signals();
    errno = saved_errno;
    // Blocked while this handler runs: delivered on return, to what was
    // there before (the default: the process ends as it would have).
    raise(sig);
}

void on_exit_in_window() { spill_all(); }

// Where the capture goes: memory, else an unlinked file in /tmp.
int capture_file() {
    const int fd = memfd_create("cldmabuf-info-stderr", MFD_CLOEXEC);
    if (fd >= 0) return fd;
    return open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

}  // namespace

bool is_own_line(std::string_view line) {
    // The layer's log ("cldmabuf: <level>: "), its stats ("cldmabuf stats:")
    // and this tool ("cldmabuf-info: ") all start so; no library's line does.
    return line.substr(0, 8) == "cldmabuf";
}

QuietStderr::QuietStderr() {
    if (g_active) return;
    std::fflush(stderr);
    const int capture = capture_file();
    if (capture < 0) return;
    // Above 2 and close-on-exec: the ICD-only child inherits fd 2 only.
    const int real = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (real < 0) {  // fd 2 closed: nothing to keep clean
        close(capture);
        return;
    }
    g_real = real;
    g_capture = capture;
    static bool hooked = false;
    if (!hooked) hooked = std::atexit(on_exit_in_window) == 0;
    if (dup2(capture, STDERR_FILENO) < 0) {
        close(real);
        close(capture);
        g_real = g_capture = -1;
        return;
    }
    g_active = 1;
    owns_ = true;
    struct sigaction act {};
    act.sa_handler = on_ending_signal;
    sigemptyset(&act.sa_mask);
    for (size_t i = 0; i < kEndings; ++i) {
        // A signal the caller ignores (nohup's SIGHUP) stays ignored.
        if (sigaction(kEnding[i], nullptr, &g_before[i]) != 0 || g_before[i].sa_handler == SIG_IGN) continue;
        g_caught[i] = sigaction(kEnding[i], &act, nullptr) == 0;
    }
}

QuietStderr::~QuietStderr() {
    if (!owns_) return;
    std::fflush(stderr);
    // fd 2 back before the window closes: a signal from here on finds the
    // real stderr either way.
    dup2(g_real, STDERR_FILENO);
    g_active = 0;
    restore_signals();
    std::string text;
    char buf[4096];
    off_t at = 0;
    for (ssize_t n; (n = pread(g_capture, buf, sizeof buf, at)) > 0; at += n) text.append(buf, static_cast<size_t>(n));
    close(g_capture);
    close(g_real);
    g_real = g_capture = -1;
    std::string kept;
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string_view line(text.data() + start, end - start);
        if (is_own_line(line)) {
            kept.append(line);
            kept += '\n';
        }
        start = end + 1;
    }
    write_all(STDERR_FILENO, kept.data(), kept.size());
}

}  // namespace cldmabuf::info
