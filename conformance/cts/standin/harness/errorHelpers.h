// Stand-in for the CTS's test_common/harness/errorHelpers.h: logging and the
// check-and-return macros the tests use, with the CTS's names and meaning.
#pragma once

#include <CL/cl.h>

// Every line goes to stdout; the last one is kept as a skipped test's reason.
void log_info(const char *format, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *format, ...) __attribute__((format(printf, 1, 2)));
const char *IGetErrorString(int clErrorCode);

#define print_error(errCode, msg) \
    log_error("ERROR: %s! (%s from %s:%d)\n", msg, IGetErrorString(errCode), __FILE__, __LINE__)

#define test_error_ret(errCode, msg, retValue)      \
    do {                                            \
        auto errCodeResult = (errCode);             \
        if (errCodeResult != CL_SUCCESS) {          \
            print_error(errCodeResult, msg);        \
            return retValue;                        \
        }                                           \
    } while (0)
#define test_error(errCode, msg) test_error_ret(errCode, msg, errCode)
#define test_error_fail(errCode, msg) test_error_ret(errCode, msg, TEST_FAIL)

#define test_failure_error_ret(errCode, expectedErrCode, msg, retValue)                                     \
    do {                                                                                                    \
        auto got_ = (errCode);                                                                              \
        auto want_ = (expectedErrCode);                                                                     \
        if (got_ != want_) {                                                                                \
            log_error("ERROR: %s! (Got %s, expected %s from %s:%d)\n", msg, IGetErrorString(got_),          \
                      IGetErrorString(want_), __FILE__, __LINE__);                                          \
            return retValue;                                                                                \
        }                                                                                                   \
    } while (0)
#define test_failure_error(errCode, expectedErrCode, msg) \
    test_failure_error_ret(errCode, expectedErrCode, msg, TEST_FAIL)

#define test_assert_error_ret(condition, msg, retValue)                                          \
    do {                                                                                         \
        if (!(condition)) {                                                                      \
            log_error("ERROR: %s! (!(%s) at %s:%d)\n", msg, #condition, __FILE__, __LINE__);     \
            return retValue;                                                                     \
        }                                                                                        \
    } while (0)
#define test_assert_error(condition, msg) test_assert_error_ret(condition, msg, TEST_FAIL)

#define test_fail(msg, ...)                 \
    do {                                    \
        log_error(msg, ##__VA_ARGS__);      \
        return TEST_FAIL;                   \
    } while (0)
