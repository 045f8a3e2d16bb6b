// Who serves the GL/EGL calls: CLDMABUF_EGL=auto|off is the user's choice;
// CLDMABUF_DEBUG=egl-force (a test's instrument) makes the layer serve them
// even where the ICD has its own, over either value.  The meson runs:
// egl-unit (nothing set: auto) and egl-unit-force (egl-force with
// CLDMABUF_EGL=off: the word wins).
#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "layer/base/settings.hpp"
#include "layer/egl/egl.hpp"
#include "layer/egl/forwarding.hpp"

using namespace cldmabuf;

namespace {

bool env_is(const char *name, const char *value) {
    const char *v = std::getenv(name);
    return v && std::string(v) == value;
}

bool forced_by_environment() {
    const char *v = std::getenv("CLDMABUF_DEBUG");
    return v && (parse_debug_words(v).mask & static_cast<unsigned>(DebugWord::egl_force)) != 0;
}

}  // namespace

TEST_CASE("egl mode: the user's CLDMABUF_EGL, unless a test's egl-force word is given", "[egl-mode]") {
    if (forced_by_environment()) {
        REQUIRE(debug_on(DebugWord::egl_force));
        CHECK(egl_mode() == EglMode::force);
        // The ICD is never asked: a platform that is no ICD's does not reach
        // its profile, and every call stays with the layer.
        const auto not_an_icds = reinterpret_cast<cl_platform_id>(static_cast<uintptr_t>(0x10));
        CHECK_FALSE(egl::icd_egl_image(not_an_icds));
        CHECK_FALSE(egl::icd_gl_sharing(not_an_icds));
    } else if (env_is("CLDMABUF_EGL", "off")) {
        CHECK(egl_mode() == EglMode::off);
    } else {
        CHECK_FALSE(debug_on(DebugWord::egl_force));
        CHECK(egl_mode() == EglMode::automatic);
    }
}
