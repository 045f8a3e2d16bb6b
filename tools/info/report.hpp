// The whole cldmabuf-info report: the OpenCL view with the layer against the
// ICDs alone, the import route per device, the blitter, the exporters and,
// with --fd, one dma-buf.  render_text() is the human form of the same tree.
#pragma once

#include <string>

#include "tools/info/json.hpp"

namespace cldmabuf::info {

struct Options {
    bool json = false;
    bool probe_egl = true;
    bool probe_va = true;     // open a VA display and ask the pairing (--no-va: skipped)
    bool verbose = false;     // -v: the probed libraries' own stderr messages too (tools/info/quiet_stderr.hpp)
    std::string fd_spec;      // --fd N | /proc/PID/fd/N
    std::string layer_path;   // what OPENCL_LAYERS names (for the "loaded" check)
    std::string self_exe;     // the cldmabuf-info binary, run again for the ICD-only view
    int child_timeout_ms = 60000;
};

// Exit codes (also in docs/user-guide.md).
constexpr int kExitOk = 0;            // at least one device imports dma-bufs
constexpr int kExitCannotImport = 1;  // no device can import (no layer, no platform, ...)
constexpr int kExitUsage = 2;
constexpr int kExitFdRefused = 3;     // --fd: not an importable dma-buf, or no device took it

Json build_report(const Options &opt, int *exit_code);
std::string render_text(const Json &report);

// The body of `cldmabuf-info` (argv as given; the binary's main() adds the
// OPENCL_LAYERS re-exec).  Tests call it in-process, where the virtual Gen9's
// dma-buf fds exist.
int run_info(int argc, char **argv, const std::string &self_exe, std::string *out, std::string *err);

}  // namespace cldmabuf::info
