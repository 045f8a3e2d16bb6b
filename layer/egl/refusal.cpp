#include "layer/egl/refusal.hpp"

#include <cstdio>

#include "layer/import/buffer.hpp"
#include "layer/base/log.hpp"

namespace cldmabuf::egl {

cl_mem refuse(cl_int *errcode_ret, cl_int err, const char *what, const std::string &why) {
    return refuse_import(errcode_ret, err, what, why);
}

cl_mem import_failed(cl_int *errcode_ret, cl_int err, const char *what, const std::string &why) {
    LOG_ERROR("%s: %s", what, why.c_str());
    if (errcode_ret) *errcode_ret = err;
    return nullptr;
}

bool valid_access_flags(cl_mem_flags flags) {
    return flags == CL_MEM_READ_ONLY || flags == CL_MEM_WRITE_ONLY || flags == CL_MEM_READ_WRITE;
}

std::string hex_text(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

}  // namespace cldmabuf::egl
