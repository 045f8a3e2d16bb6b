// clImportMemoryARM's property list, read without an ICD (the parser is
// split from arm.cpp so that tests/fuzz links it alone).
#include "layer/import/arm.hpp"

#include "layer/import/request.hpp"

namespace cldmabuf {

cl_int parse_arm_import_properties(const cl_import_properties_arm *props, ArmImportProperties *out,
                                   std::string *why) {
    *out = ArmImportProperties{};
    if (!props) return CL_SUCCESS;
    bool seen_type = false, seen_protected = false, seen_consistency = false;
    std::string reason;  // of the entry at hand
    auto repeated = [&](bool &seen, const char *name) {
        if (seen) reason = std::string(name) + " given twice";
        const bool again = seen;
        seen = true;
        return again;
    };
    auto boolean = [&](cl_import_properties_arm v, const char *name, bool *dst) {
        if (v != CL_TRUE && v != CL_FALSE) {
            reason = std::string(name) + " must be CL_TRUE or CL_FALSE, got " + std::to_string(v);
            return false;
        }
        *dst = v == CL_TRUE;
        return true;
    };
    auto take = [&](cl_import_properties_arm key, cl_import_properties_arm value) -> cl_int {
        switch (key) {
        case CL_IMPORT_TYPE_ARM:
            out->type = value;  // the last one, refused or not (ArmImportProperties::type)
            if (repeated(seen_type, "CL_IMPORT_TYPE_ARM")) return CL_INVALID_PROPERTY;
            if (value != CL_IMPORT_TYPE_HOST_ARM && value != CL_IMPORT_TYPE_DMA_BUF_ARM &&
                value != CL_IMPORT_TYPE_ANDROID_HARDWARE_BUFFER_ARM) {
                reason = "CL_IMPORT_TYPE_ARM value " + std::to_string(value) + " is not a memory type";
                return CL_INVALID_PROPERTY;
            }
            break;
        case CL_IMPORT_TYPE_PROTECTED_ARM:
            if (repeated(seen_protected, "CL_IMPORT_TYPE_PROTECTED_ARM")) return CL_INVALID_PROPERTY;
            if (!boolean(value, "CL_IMPORT_TYPE_PROTECTED_ARM", &out->protected_memory)) return CL_INVALID_PROPERTY;
            break;
        case CL_IMPORT_DMA_BUF_DATA_CONSISTENCY_WITH_HOST_ARM:
            if (repeated(seen_consistency, "CL_IMPORT_DMA_BUF_DATA_CONSISTENCY_WITH_HOST_ARM"))
                return CL_INVALID_PROPERTY;
            if (!boolean(value, "CL_IMPORT_DMA_BUF_DATA_CONSISTENCY_WITH_HOST_ARM", &out->host_consistency))
                return CL_INVALID_PROPERTY;
            break;
        default:
            reason = "unknown clImportMemoryARM property " + std::to_string(key);
            return CL_INVALID_PROPERTY;
        }
        return CL_SUCCESS;
    };
    // To the end, past a bad entry: the first one is the refusal, the last
    // type entry is what an ICD's own import is asked for.
    cl_int err = CL_SUCCESS;
    walk_properties(props, [&](const cl_import_properties_arm *p, size_t) {
        const cl_int entry = take(p[0], p[1]);
        if (entry != CL_SUCCESS && err == CL_SUCCESS) {
            err = entry;
            *why = reason;
        }
        return true;
    });
    return err;
}

}  // namespace cldmabuf
