// What the end-to-end tests ask of a cl_event, with the query itself checked.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include "cl_fixture.hpp"

namespace e2e {

inline cl_int status_of(cl_event ev) {
    cl_int s = 0;
    REQUIRE(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr) == CL_SUCCESS);
    return s;
}

inline cl_command_type type_of(cl_event ev) {
    cl_command_type t = 0;
    REQUIRE(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof t, &t, nullptr) == CL_SUCCESS);
    return t;
}

}  // namespace e2e
