#include "layer/import/refuse.hpp"

#include "layer/log.hpp"
#include "layer/stats.hpp"

namespace cldmabuf {

cl_int refuse(cl_int err, const char *what, const std::string &why) {
    LOG_ERROR("%s refused: %s", what, why.c_str());
    stats().import_errors++;
    return err;
}

cl_mem refuse_import(cl_int *errcode_ret, cl_int err, const char *what, const std::string &why) {
    err = refuse(err, what, why);
    if (errcode_ret) *errcode_ret = err;
    return nullptr;
}

}  // namespace cldmabuf
