// segv_trace.so: LD_PRELOAD diagnostic for crashes on machines without gdb
// (the GPU machine).  Prints the faulting address and a backtrace with the
// object each frame lives in (and its offset there, for addr2line here), then
// lets the signal kill the process.  Test frameworks install their own
// SIGSEGV handler (Catch2 does), which would hide the frames: their
// sigaction() calls for SIGSEGV/SIGBUS are accepted and ignored.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void report(int sig, siginfo_t *info, void *ctx) {
    (void)ctx;
    void *frames[64];
    int n = backtrace(frames, 64);
    char line[512];
    int len = snprintf(line, sizeof line, "segv_trace: signal %d at address %p, %d frames\n", sig, info->si_addr, n);
    write(2, line, len);
    for (int i = 0; i < n; ++i) {
        Dl_info d;
        memset(&d, 0, sizeof d);
        if (dladdr(frames[i], &d) && d.dli_fname) {
            len = snprintf(line, sizeof line, "  #%d %s+0x%lx (%s)\n", i, d.dli_fname,
                           (unsigned long)((char *)frames[i] - (char *)d.dli_fbase), d.dli_sname ? d.dli_sname : "?");
        } else {
            len = snprintf(line, sizeof line, "  #%d %p\n", i, frames[i]);
        }
        write(2, line, len);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    static int (*real)(int, const struct sigaction *, struct sigaction *);
    if (!real) real = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT, "sigaction");
    if ((sig == SIGSEGV || sig == SIGBUS) && act && act->sa_sigaction != report) {
        if (old) memset(old, 0, sizeof *old);
        return 0;
    }
    return real(sig, act, old);
}

__attribute__((constructor)) static void install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = report;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}
