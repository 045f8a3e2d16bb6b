/* Control API of the virtual Gen9 device (libvgen9.so).
 *
 * libvgen9.so is a test instrument loaded with LD_PRELOAD: it answers as an
 * i915 render node on a Skylake GT2 and executes blitter batches on the CPU.
 * The layer never links it.  Tests call these functions either by linking
 * libvgen9.so or through dlsym(RTLD_DEFAULT, "vgen9_...").
 *
 * Environment equivalents, read once at load time.  vgen9_reset() restores
 * LOG, DELAY_MS and MANUAL; HANG_NEXT, NEVER_SIGNAL_NEXT and FAIL_IOCTL are
 * one-shot (they apply from load time until consumed or reset):
 *   CLDMABUF_SIM_LOG=1               one stderr line per event
 *   CLDMABUF_SIM_DELAY_MS=<ms>       each batch completes <ms> after submission
 *   CLDMABUF_SIM_MANUAL=1            batches complete only on vgen9_tick()
 *   CLDMABUF_SIM_HANG_NEXT=<n>       next n batches hang (fence error -EIO)
 *   CLDMABUF_SIM_NEVER_SIGNAL_NEXT=<n> next n batch fences never signal
 *   CLDMABUF_SIM_NO_PREEMPTION=1     I915_CONTEXT_PARAM_PERSISTENCE = 0 refused (-ENODEV)
 *   CLDMABUF_SIM_FAIL_IOCTL=<req>:<nth>:<errno>[,...]  e.g. 0xc0406469:1:EIO
 *   CLDMABUF_SIM_PCI_SLOT=dddd:bb:dd.f  the node's PCI function in the fake
 *                                    sysfs (default 0000:00:02.0)
 *
 * Nothing produced by this device is a hardware result.
 */
#ifndef VGEN9_H
#define VGEN9_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vgen9_stats {
    uint64_t live_objects;      /* GEM objects alive (any backing) */
    uint64_t live_memfds;       /* memfds held by the sim (one per native object) */
    uint64_t live_mappings;     /* sim-internal mappings + user mmaps of sim fds not yet unmapped */
    uint64_t live_device_fds;   /* open fds on the fake render node */
    uint64_t live_dmabuf_fds;   /* open fds of dma-bufs exported by the sim */
    uint64_t live_sync_fds;     /* open sync_file fds created by the sim */
    uint64_t batches_submitted; /* execbuffers accepted */
    uint64_t batches_executed;  /* batches run by the engine (incl. engine -EIO) */
    uint64_t batches_hung;      /* fences completed with -EIO */
    uint64_t batches_rejected;  /* execbuffers refused with an errno */
    uint64_t batches_queued;    /* accepted but not yet completed */
    uint64_t batches_cancelled; /* ended with -EIO by their non-persistent context's destruction */
};

/* Path of the fake node, e.g. "/dev/dri/renderD128". */
const char *vgen9_node_path(void);

/* The nth (1 = next) call of ioctl `request` on a sim fd fails with `err`
 * (EINTR, EAGAIN, ENOMEM, ENOSPC, EIO, ...).  nth == 0: every call fails
 * until vgen9_reset().  Returns 0, or -1 on a bad argument. */
int vgen9_fail_ioctl(unsigned long request, unsigned nth, int err);
/* The next n accepted batches hang: not executed, fence completes with -EIO. */
void vgen9_hang_next(unsigned n);
/* The next n accepted batches are not executed and their fences never signal
 * (until vgen9_reset(), which completes them with -EIO like a GPU reset). */
void vgen9_never_signal_next(unsigned n);
/* Completion delay after submission (0 = immediate). */
void vgen9_set_delay_ms(unsigned ms);
/* Manual mode: batches run only when ticked. */
void vgen9_set_manual(int on);
/* Run up to n queued batches (waits until they completed); returns how many ran. */
unsigned vgen9_tick(unsigned n);
/* Block until the queue is empty (never-signal fences excluded); returns 0,
 * or -1 when manual mode holds work back. */
int vgen9_drain(void);
/* Back to the load-time LOG/DELAY/MANUAL configuration: clears all fault
 * injection, completes never-signalled fences with -EIO (a GPU reset), drains
 * the queue, zeroes the batch counters. */
void vgen9_reset(void);
void vgen9_stats(struct vgen9_stats *out);
/* The exp_name that /proc/self/fdinfo/<fd> reports for the sim's dma-bufs
 * (default "i915", as i915_gem_prime_export; NULL restores it): tests play
 * another exporter ("system", "udmabuf") with it.  Reset by vgen9_reset(). */
void vgen9_set_export_name(const char *name);
/* on != 0: the node has no preempt-to-idle / engine reset, so
 * I915_CONTEXT_PARAM_PERSISTENCE = 0 is refused with -ENODEV (also
 * CLDMABUF_SIM_NO_PREEMPTION=1).  Reset by vgen9_reset(). */
void vgen9_set_no_preemption(int on);
/* Toggle event logging at run time. */
void vgen9_set_log(int on);
/* GEM contexts made with CONTEXT_CREATE and not destroyed, over every open
 * drm_file of the node (leak checks). */
uint64_t vgen9_live_contexts(void);

#ifdef __cplusplus
}
#endif

#endif /* VGEN9_H */
