/* The virtual VA driver's test controls (tests/va/, docs/va-api.md).  The
 * driver is loaded by libva (LIBVA_DRIVER_NAME=vva, LIBVA_DRIVERS_PATH);
 * tests reach these with dlsym(RTLD_DEFAULT, ...), libva opening drivers
 * RTLD_GLOBAL.  The layer never links or calls them. */
#ifndef VVA_CONTROL_H
#define VVA_CONTROL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* vaSyncSurface calls answered since the driver loaded. */
unsigned vva_sync_count(void);
/* The next n vaSyncSurface/vaSyncSurface2 calls answer `status` (a VA_STATUS_ERROR_*). */
void vva_fail_next_syncs(unsigned n, int status);
/* The next n vaExportSurfaceHandle calls answer `status`. */
void vva_fail_next_exports(unsigned n, int status);
/* The DRM format modifier vaExportSurfaceHandle reports from now on (0 =
 * DRM_FORMAT_MOD_LINEAR, the default); the bytes stay linear, so only the
 * importer's decision on the layout can be tested with another. */
void vva_export_modifier(uint64_t modifier);
/* Live objects the driver holds: surfaces + images + buffers + configs + contexts. */
unsigned vva_live_objects(void);
/* The memory backend in use: "gem", "heap", "udmabuf" or "none". */
const char *vva_memory_backend(void);

#ifdef __cplusplus
}
#endif
#endif
