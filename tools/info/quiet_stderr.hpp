// Keeps the probed libraries' own messages off cldmabuf-info's output while it
// builds its report; -v (Options::verbose) does without it.
//
// Mesa's EGL and the Gallium driver it loads, libva's driver search and the
// ICDs write what they tried and gave up on straight to stderr: on a host
// with a Gen9 node and a kernel Iris rejects, ten lines of it before the
// report.  Environment variables cannot quiet all of it: EGL_LOG_LEVEL and
// LIBVA_MESSAGING_LEVEL silence libEGL's and libva's, but Mesa 22.3's
// mesa_logw() ("MESA: warning: ...") and Gallium's debug_error() ("error:
// Kernel is too old ...") write to stderr with no setting in a release build,
// and the next library would have its own variable.  So fd 2 itself is
// taken: while a QuietStderr lives, fd 2 is an anonymous file, which every
// writer (this process's libraries, their threads, the ICD-only child that
// inherits it) appends to.  When it ends, fd 2 is put back and the lines that
// are cldmabuf's own (the layer's "cldmabuf: <level>: ...", its "cldmabuf
// stats: ...", the tool's "cldmabuf-info: ...") are written there, so the
// layer's errors are not lost; the rest is dropped.
//
// A file, not a pipe: nothing has to drain it while the probes run, so a
// chatty library cannot block on a full pipe.  If the process dies in the
// window (a driver crashes or calls exit(), or the user interrupts a hang),
// everything captured is written to the real stderr first, unfiltered: then
// the libraries' words are the evidence.
#pragma once

#include <string_view>

namespace cldmabuf::info {

class QuietStderr {
public:
    // Starts capturing; if fd 2 cannot be taken, nothing is hidden.
    QuietStderr();
    // Puts fd 2 back and writes cldmabuf's own captured lines to it.
    ~QuietStderr();
    QuietStderr(const QuietStderr &) = delete;
    QuietStderr &operator=(const QuietStderr &) = delete;

private:
    bool owns_ = false;  // false when fd 2 could not be taken, or already is
};

// Whether a line of stderr is cldmabuf's own (kept) or a library's (dropped).
bool is_own_line(std::string_view line);

}  // namespace cldmabuf::info
