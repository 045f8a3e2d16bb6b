#include "tools/info/cl_view.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>

extern char **environ;

namespace cldmabuf::info {
namespace {

std::string platform_string(cl_platform_id p, cl_platform_info name) {
    size_t bytes = 0;
    if (clGetPlatformInfo(p, name, 0, nullptr, &bytes) != CL_SUCCESS || bytes == 0) return {};
    std::string s(bytes, '\0');
    if (clGetPlatformInfo(p, name, bytes, s.data(), nullptr) != CL_SUCCESS) return {};
    s.resize(std::strlen(s.c_str()));
    return s;
}

std::string device_string(cl_device_id d, cl_device_info name) {
    size_t bytes = 0;
    if (clGetDeviceInfo(d, name, 0, nullptr, &bytes) != CL_SUCCESS || bytes == 0) return {};
    std::string s(bytes, '\0');
    if (clGetDeviceInfo(d, name, bytes, s.data(), nullptr) != CL_SUCCESS) return {};
    s.resize(std::strlen(s.c_str()));
    return s;
}

template <typename Query>
std::vector<uint64_t> handle_types(Query query) {
    size_t bytes = 0;
    std::vector<uint64_t> out;
    if (query(0, nullptr, &bytes) != CL_SUCCESS || bytes == 0) return out;
    std::vector<cl_external_memory_handle_type_khr> types(bytes / sizeof(cl_external_memory_handle_type_khr));
    if (query(bytes, types.data(), nullptr) != CL_SUCCESS) return out;
    for (auto t : types) out.push_back(t);
    return out;
}

// cl_khr_pci_bus_info (0x410F): four cl_uints.
bool device_pci(cl_device_id d, std::string *out) {
    struct {
        cl_uint domain, bus, device, function;
    } info{};
    if (clGetDeviceInfo(d, 0x410F, sizeof info, &info, nullptr) != CL_SUCCESS) return false;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", info.domain, info.bus, info.device, info.function);
    *out = buf;
    return true;
}

std::string hex_list(const std::vector<uint64_t> &v) {
    std::string out;
    for (uint64_t t : v) {
        char buf[24];
        std::snprintf(buf, sizeof buf, "%s0x%llx", out.empty() ? "" : ",", static_cast<unsigned long long>(t));
        out += buf;
    }
    return out;
}

std::vector<uint64_t> parse_hex_list(const std::string &s) {
    std::vector<uint64_t> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) out.push_back(std::strtoull(item.c_str(), nullptr, 16));
    return out;
}

std::vector<std::string> split_tabs(const std::string &line) {
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t pos; (pos = line.find('\t', start)) != std::string::npos; start = pos + 1)
        out.push_back(line.substr(start, pos - start));
    out.push_back(line.substr(start));
    return out;
}

// Tabs and newlines would break the line format; no real name has them.
std::string clean(std::string s) {
    for (char &c : s)
        if (c == '\t' || c == '\n') c = ' ';
    return s;
}

}  // namespace

bool has_extension(const std::string &list, const std::string &word) {
    for (const std::string &e : split_extensions(list))
        if (e == word) return true;
    return false;
}

std::vector<std::string> split_extensions(const std::string &list) {
    std::vector<std::string> out;
    std::stringstream in(list);
    std::string word;
    while (in >> word) out.push_back(word);
    return out;
}

std::vector<ClPlatform> enumerate_platforms(std::string *error) {
    std::vector<ClPlatform> out;
    cl_uint count = 0;
    cl_int err = clGetPlatformIDs(0, nullptr, &count);
    if (err != CL_SUCCESS || count == 0) {
        *error = err == CL_SUCCESS || err == -1001 ? "no OpenCL platform (no ICD registered in /etc/OpenCL/vendors)"
                                                   : "clGetPlatformIDs failed (" + std::to_string(err) + ")";
        return out;
    }
    std::vector<cl_platform_id> ids(count);
    clGetPlatformIDs(count, ids.data(), nullptr);
    for (cl_platform_id p : ids) {
        ClPlatform plat;
        plat.id = p;
        plat.name = platform_string(p, CL_PLATFORM_NAME);
        plat.vendor = platform_string(p, CL_PLATFORM_VENDOR);
        plat.version = platform_string(p, CL_PLATFORM_VERSION);
        plat.extensions = platform_string(p, CL_PLATFORM_EXTENSIONS);
        plat.import_types = handle_types([p](size_t s, void *v, size_t *r) {
            return clGetPlatformInfo(p, CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, s, v, r);
        });
        cl_uint ndev = 0;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndev) == CL_SUCCESS && ndev) {
            std::vector<cl_device_id> devs(ndev);
            clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, ndev, devs.data(), nullptr);
            for (cl_device_id d : devs) {
                ClDevice dev;
                dev.id = d;
                dev.name = device_string(d, CL_DEVICE_NAME);
                dev.extensions = device_string(d, CL_DEVICE_EXTENSIONS);
                clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof dev.type, &dev.type, nullptr);
                clGetDeviceInfo(d, CL_DEVICE_VENDOR_ID, sizeof dev.vendor_id, &dev.vendor_id, nullptr);
                cl_bool b = CL_FALSE;
                if (clGetDeviceInfo(d, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof b, &b, nullptr) == CL_SUCCESS)
                    dev.host_unified = b;
                b = CL_FALSE;
                if (clGetDeviceInfo(d, CL_DEVICE_IMAGE_SUPPORT, sizeof b, &b, nullptr) == CL_SUCCESS)
                    dev.image_support = b;
                dev.import_types = handle_types([d](size_t s, void *v, size_t *r) {
                    return clGetDeviceInfo(d, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, s, v, r);
                });
                dev.has_pci = device_pci(d, &dev.pci);
                plat.devices.push_back(std::move(dev));
            }
        }
        out.push_back(std::move(plat));
    }
    return out;
}

// P <name> <vendor> <version> <extensions> <types>
// D <name> <type> <unified> <images> <vendor id> <extensions> <types> <pci or ->
std::string serialize(const std::vector<ClPlatform> &platforms) {
    std::string out;
    for (const ClPlatform &p : platforms) {
        out += "P\t" + clean(p.name) + "\t" + clean(p.vendor) + "\t" + clean(p.version) + "\t" +
               clean(p.extensions) + "\t" + hex_list(p.import_types) + "\n";
        for (const ClDevice &d : p.devices)
            out += "D\t" + clean(d.name) + "\t" + std::to_string(d.type) + "\t" + (d.host_unified ? "1" : "0") +
                   "\t" + (d.image_support ? "1" : "0") + "\t" + std::to_string(d.vendor_id) + "\t" +
                   clean(d.extensions) + "\t" + hex_list(d.import_types) + "\t" + (d.has_pci ? d.pci : "-") +
                   "\n";
    }
    return out;
}

std::vector<ClPlatform> deserialize(const std::string &text) {
    std::vector<ClPlatform> out;
    std::stringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        const std::vector<std::string> f = split_tabs(line);
        if (f[0] == "P" && f.size() >= 6) {
            ClPlatform p;
            p.name = f[1], p.vendor = f[2], p.version = f[3], p.extensions = f[4];
            p.import_types = parse_hex_list(f[5]);
            out.push_back(std::move(p));
        } else if (f[0] == "D" && f.size() >= 9 && !out.empty()) {
            ClDevice d;
            d.name = f[1];
            d.type = std::strtoull(f[2].c_str(), nullptr, 10);
            d.host_unified = f[3] == "1";
            d.image_support = f[4] == "1";
            d.vendor_id = static_cast<cl_uint>(std::strtoul(f[5].c_str(), nullptr, 10));
            d.extensions = f[6];
            d.import_types = parse_hex_list(f[7]);
            d.has_pci = f[8] != "-";
            if (d.has_pci) d.pci = f[8];
            out.back().devices.push_back(std::move(d));
        }
    }
    return out;
}

bool icd_only_view(const std::string &self_exe, int timeout_ms, std::vector<ClPlatform> *out, std::string *why) {
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        *why = std::string("pipe: ") + std::strerror(errno);
        return false;
    }
    // The child's environment: ours without OPENCL_LAYERS.
    std::vector<char *> env;
    for (char **e = environ; *e; ++e)
        if (std::strncmp(*e, "OPENCL_LAYERS=", 14) != 0) env.push_back(*e);
    env.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipefd[1], STDOUT_FILENO);
    std::string arg0 = self_exe, arg1 = "--icd-view";
    char *argv[] = {arg0.data(), arg1.data(), nullptr};
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, self_exe.c_str(), &actions, nullptr, argv, env.data());
    posix_spawn_file_actions_destroy(&actions);
    close(pipefd[1]);
    if (rc != 0) {
        close(pipefd[0]);
        *why = "cannot start " + self_exe + ": " + std::strerror(rc);
        return false;
    }
    std::string text;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    bool timed_out = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                                 std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{pipefd[0], POLLIN, 0};
        const int n = poll(&p, 1, static_cast<int>(left.count()));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            timed_out = n == 0;
            break;
        }
        char buf[4096];
        const ssize_t got = read(pipefd[0], buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        text.append(buf, static_cast<size_t>(got));
    }
    close(pipefd[0]);
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) {
        *why = "the ICD-only child did not finish within " + std::to_string(timeout_ms) + " ms";
        return false;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        *why = "the ICD-only child failed (status " + std::to_string(status) + ")";
        return false;
    }
    *out = deserialize(text);
    return true;
}

}  // namespace cldmabuf::info
