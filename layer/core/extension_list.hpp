// The one search of a space-separated extension string (CL_*_EXTENSIONS):
// whole words only, so "cl_khr_external_memory" is not found in
// "cl_khr_external_memory_dma_buf".
#pragma once

#include <cstring>
#include <string>

namespace cldmabuf {

inline bool extension_listed(const std::string &list, const char *name) {
    const size_t len = std::strlen(name);
    if (len == 0) return false;
    for (size_t pos = list.find(name); pos != std::string::npos; pos = list.find(name, pos + 1)) {
        const bool start = pos == 0 || list[pos - 1] == ' ';
        const bool end = pos + len == list.size() || list[pos + len] == ' ' || list[pos + len] == '\0';
        if (start && end) return true;
    }
    return false;
}

}  // namespace cldmabuf
