// The virtual Gen9's node opens in a process where another library's
// constructor called a hook before libvgen9.so was initialised (linked with
// libearly_hook_caller.so; run with LD_PRELOAD=libvgen9.so).  Exit 0 when it does.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

extern "C" bool early_hook_caller_ran();

int main() {
    if (!early_hook_caller_ran()) {
        std::printf("the early library's constructor did not run\n");
        return 1;
    }
    using NodePath = const char *(*)();
    auto node_path = reinterpret_cast<NodePath>(dlsym(RTLD_DEFAULT, "vgen9_node_path"));
    if (!node_path) {
        std::printf("libvgen9.so is not preloaded\n");
        return 1;
    }
    const char *node = node_path();
    if (std::strncmp(node, "/dev/dri/renderD", 16) != 0) {
        std::printf("the node's path is \"%s\", not a render node\n", node);
        return 1;
    }
    const int fd = open(node, O_RDWR);
    if (fd < 0) {
        std::printf("open(%s): %s\n", node, std::strerror(errno));
        return 1;
    }
    close(fd);
    std::printf("%s opens after an early hook call\n", node);
    return 0;
}
