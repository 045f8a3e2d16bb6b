// step_latency_probe: what a host step behind a busy queue costs an ICD,
// piece by piece, without the layer.  The layer's queued handoff step is a
// marker whose callback runs the step (on the layer's worker) and then
// completes a user event that gates the application's next command; on
// NVIDIA such a step cost about 10 ms while a transfer was in flight and
// 0.04 ms on an idle queue.  Each variant below is one piece of that
// pattern, timed from the first enqueue to clFinish's return, median of
// `reps` rounds, alternating variants round by round:
//   plain     Write (N bytes, pageable) + marker; clFinish
//   poll      plain, then the application polls the marker's status until
//             complete, then completes a user event gating a second marker
//   callback  plain, the marker's callback completes the user event (on the
//             ICD's callback thread), a second marker waits for it
//   thread    plain, the marker's callback wakes a thread of ours, which
//             completes the user event (the layer's worker)
//   gate-only a user event completed at once by the application gating a
//             marker behind the Write: what the gate alone costs
//   poll-thr  callback's shape with the status polled: a thread of ours
//             polls the marker and completes the user event while the
//             application is already in clFinish (the layer's poller)
//   cb-wait   callback, but the application waits for the callback to have
//             completed the user event before it calls clFinish: whether
//             the callback is late or clFinish wakes late
//   poll-wait poll-thr, the application waiting as in cb-wait
// Usage: probe [BYTES] [ROUNDS] [MASK of variants, bit 0 = plain]
// Build: cc -O2 -o probe step_latency_probe.c -lOpenCL -lpthread
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static void check(cl_int err, const char *what) {
    if (err != CL_SUCCESS) {
        fprintf(stderr, "probe: %s failed: %d\n", what, err);
        exit(1);
    }
}
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static cl_event pending_gate;  // for the thread variant
static int quit;

static void CL_CALLBACK complete_gate(cl_event e, cl_int status, void *gate) {
    (void)e;
    (void)status;
    clSetUserEventStatus((cl_event)gate, CL_COMPLETE);
    clReleaseEvent((cl_event)gate);  // retained for us: clFinish may return before this returns
}
static void CL_CALLBACK wake_thread(cl_event e, cl_int status, void *gate) {
    (void)e;
    (void)status;
    pthread_mutex_lock(&mu);
    pending_gate = (cl_event)gate;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}
static volatile int gate_done;  // cb-wait, poll-wait: the user event was completed
static void CL_CALLBACK complete_gate_flag(cl_event e, cl_int status, void *gate) {
    complete_gate(e, status, gate);
    __atomic_store_n(&gate_done, 1, __ATOMIC_RELEASE);
}
struct polled { cl_event marker, gate; };
static void *poll_and_complete(void *arg) {
    struct polled *p = arg;
    cl_int st = CL_QUEUED;
    do {
        clGetEventInfo(p->marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
        if (st > CL_COMPLETE) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    } while (st > CL_COMPLETE);
    clSetUserEventStatus(p->gate, CL_COMPLETE);
    __atomic_store_n(&gate_done, 1, __ATOMIC_RELEASE);
    return NULL;
}
static void *worker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!pending_gate && !quit) pthread_cond_wait(&cv, &mu);
        if (quit) break;
        cl_event g = pending_gate;
        pending_gate = NULL;
        pthread_mutex_unlock(&mu);
        clSetUserEventStatus(g, CL_COMPLETE);
        clReleaseEvent(g);
        pthread_mutex_lock(&mu);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

enum { PLAIN, POLL, CALLBACK, THREAD, GATE_ONLY, POLL_THREAD, CB_WAIT, POLL_WAIT, VARIANTS };
static const char *names[VARIANTS] = {"plain",    "poll",     "callback", "thread",
                                      "gate-only", "poll-thr", "cb-wait",  "poll-wait"};

int main(int argc, char **argv) {
    size_t bytes = argc > 1 ? strtoul(argv[1], NULL, 0) : 3110400;  // a 1080p NV12 frame
    int reps = argc > 2 ? atoi(argv[2]) : 60;
    unsigned mask = argc > 3 ? strtoul(argv[3], NULL, 0) : (1u << VARIANTS) - 1;  // which variants run
    cl_platform_id platforms[8];
    cl_uint np = 0;
    check(clGetPlatformIDs(8, platforms, &np), "clGetPlatformIDs");
    cl_device_id dev;
    check(clGetDeviceIDs(platforms[0], CL_DEVICE_TYPE_ALL, 1, &dev, NULL), "clGetDeviceIDs");
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    check(err, "clCreateContext");
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    check(err, "queue");
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    check(err, "buffer");
    char *host = malloc(bytes);
    memset(host, 7, bytes);
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    double *t[VARIANTS];
    for (int v = 0; v < VARIANTS; ++v) t[v] = calloc(reps, sizeof(double));
    for (int r = -3; r < reps; ++r) {
        for (int k = 0; k < VARIANTS; ++k) {
            int v = (k + (r < 0 ? 0 : r)) % VARIANTS;
            if (!(mask & (1u << v))) continue;
            double t0 = now_us();
            cl_event gate = NULL, m1 = NULL;
            if (v == GATE_ONLY) {
                gate = clCreateUserEvent(ctx, &err);
                check(err, "user event");
            }
            check(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, bytes, host, 0, NULL, NULL), "write");
            if (v == GATE_ONLY) {
                check(clSetUserEventStatus(gate, CL_COMPLETE), "complete");
                check(clEnqueueMarkerWithWaitList(q, 1, &gate, NULL), "marker2");
            } else {
                check(clEnqueueMarkerWithWaitList(q, 0, NULL, &m1), "marker");
            }
            pthread_t poller;
            struct polled polled;
            gate_done = 0;
            if (v == POLL || v == CALLBACK || v == THREAD || v == POLL_THREAD || v == CB_WAIT || v == POLL_WAIT) {
                gate = clCreateUserEvent(ctx, &err);
                check(err, "user event");
                if (v == CALLBACK || v == THREAD || v == CB_WAIT) clRetainEvent(gate);
                if (v == CALLBACK) check(clSetEventCallback(m1, CL_COMPLETE, complete_gate, gate), "callback");
                if (v == CB_WAIT) check(clSetEventCallback(m1, CL_COMPLETE, complete_gate_flag, gate), "callback");
                if (v == THREAD) check(clSetEventCallback(m1, CL_COMPLETE, wake_thread, gate), "callback");
                check(clEnqueueMarkerWithWaitList(q, 1, &gate, NULL), "marker2");
                if (v == POLL_THREAD || v == POLL_WAIT) {
                    clFlush(q);
                    polled.marker = m1;
                    polled.gate = gate;
                    pthread_create(&poller, NULL, poll_and_complete, &polled);
                }
                if (v == CB_WAIT) clFlush(q);
                if (v == CB_WAIT || v == POLL_WAIT)
                    while (!__atomic_load_n(&gate_done, __ATOMIC_ACQUIRE)) sched_yield();
                if (v == POLL) {
                    clFlush(q);
                    cl_int st = CL_QUEUED;
                    do check(clGetEventInfo(m1, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL), "status");
                    while (st > CL_COMPLETE);
                    check(clSetUserEventStatus(gate, CL_COMPLETE), "complete");
                }
            }
            check(clFinish(q), "clFinish");
            double us = now_us() - t0;
            if (v == POLL_THREAD || v == POLL_WAIT) pthread_join(poller, NULL);
            if (m1) clReleaseEvent(m1);
            if (gate) clReleaseEvent(gate);
            if (r >= 0) t[v][r] = us;
        }
    }
    printf("step latency probe: %zu bytes, %d rounds, median [min-max] us per round\n", bytes, reps);
    for (int v = 0; v < VARIANTS; ++v) {
        if (!(mask & (1u << v))) continue;
        qsort(t[v], reps, sizeof(double), cmp);
        printf("  %-10s %10.1f [%.1f-%.1f]\n", names[v], t[v][reps / 2], t[v][0], t[v][reps - 1]);
    }
    pthread_mutex_lock(&mu);
    quit = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(th, NULL);
    return 0;
}
