#include "layer/import/refuse.hpp"

#include <cerrno>

#include "layer/base/log.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf {

cl_int refuse(cl_int err, const char *what, const std::string &why) {
    LOG_ERROR("%s refused: %s", what, why.c_str());
    stats().import_errors++;
    return err;
}

cl_int map_failure_error(int err) {
    if (err == ENOMEM) return CL_OUT_OF_HOST_MEMORY;
    if (err == EAGAIN || err == ENFILE || err == EMFILE) return CL_OUT_OF_RESOURCES;
    return CL_INVALID_PROPERTY;
}

cl_mem refuse_import(cl_int *errcode_ret, cl_int err, const char *what, const std::string &why) {
    err = refuse(err, what, why);
    if (errcode_ret) *errcode_ret = err;
    return nullptr;
}

}  // namespace cldmabuf
