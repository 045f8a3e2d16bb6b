// A library whose constructor reaches the virtual Gen9's hooks before
// libvgen9.so's own constructors have run, as libnuma's does in FFmpeg
// (its constructor lists /sys/devices/system/node): the loader may run a
// program's libraries' constructors before those of an LD_PRELOAD library.
#include <dirent.h>

namespace {
bool g_ran = false;
}

__attribute__((constructor)) static void early_hook_caller() {
    if (DIR *d = opendir("/sys/devices/system/node")) closedir(d);
    g_ran = true;
}

// Referenced by the test, so that the linker keeps the library.
extern "C" __attribute__((visibility("default"))) bool early_hook_caller_ran() { return g_ran; }
