// cldmabuf-info: what the cldmabuf layer does on this machine, and why
// (docs/user-guide.md).  The report itself is tools/info/report.cpp; this file
// makes sure the layer is loaded in this process and runs the ICD-only child.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tools/info/cl_view.hpp"
#include "tools/info/report.hpp"

#ifndef CLDMABUF_INSTALLED_LAYER
#define CLDMABUF_INSTALLED_LAYER "/usr/lib/x86_64-linux-gnu/cldmabuf/libcldmabuf.so"
#endif

namespace {

std::string self_exe() {
    char buf[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace

int main(int argc, char **argv) {
    // The child half of the comparison: the ICDs without the layer.
    if (argc == 2 && std::strcmp(argv[1], "--icd-view") == 0) {
        std::string error;
        std::fputs(cldmabuf::info::serialize(cldmabuf::info::enumerate_platforms(&error)).c_str(), stdout);
        return 0;
    }
    // The loader reads OPENCL_LAYERS once, before the first OpenCL call: the
    // layer to report on must be in the environment when the process starts,
    // so set it and start again.  --layer wins, then OPENCL_LAYERS, then the
    // installed layer.
    std::string layer;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--layer") && i + 1 < argc) layer = argv[i + 1];
        else if (!std::strncmp(argv[i], "--layer=", 8)) layer = argv[i] + 8;
    }
    const char *env = std::getenv("OPENCL_LAYERS");
    if (layer.empty()) layer = env && *env ? env : CLDMABUF_INSTALLED_LAYER;
    if (!env || layer != env) {
        if (std::getenv("CLDMABUF_INFO_REEXEC")) {
            std::fprintf(stderr, "cldmabuf-info: cannot set OPENCL_LAYERS=%s\n", layer.c_str());
            return cldmabuf::info::kExitUsage;
        }
        setenv("OPENCL_LAYERS", layer.c_str(), 1);
        setenv("CLDMABUF_INFO_REEXEC", "1", 1);
        const std::string exe = self_exe();
        execv(exe.c_str(), argv);
        std::perror("cldmabuf-info: execv");
        return cldmabuf::info::kExitUsage;
    }
    unsetenv("CLDMABUF_INFO_REEXEC");
    std::string out, err;
    const int code = cldmabuf::info::run_info(argc, argv, self_exe(), &out, &err);
    std::fputs(out.c_str(), stdout);
    std::fputs(err.c_str(), stderr);
    return code;
}
