/* Command queues, command lists, events and fences.
 *
 * Every Level Zero queue and every immediate command list owns an in-order OpenCL queue.
 * Immediate lists enqueue each command as it is appended. Regular lists record commands (a launch
 * records a snapshot of the kernel with its current arguments, pitfall 6) and enqueue them in
 * order when a queue executes the list; after each execution a marker event serves
 * zeCommandQueueSynchronize and the fence.
 *
 * Events: see ze_cpu_event_t. Waiting resolves an event to an OpenCL event at enqueue time:
 * nothing if it is signalled already, the signalling command's event if one was enqueued, or a
 * user event that a later host signal or signalling command completes. Resetting an event
 * (zeEventHostReset, zeCommandListAppendEventReset) only changes that bookkeeping: on an in-order
 * queue everything enqueued later sees the reset state. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ze_cpu.h"

#define MAX_FILL_PATTERN 128
#define QUEUE_FLAGS_KNOWN 0x3u /* EXPLICIT_ONLY, IN_ORDER (1.7) */
#define LIST_FLAGS_KNOWN 0xfu  /* RELAXED_ORDERING, MAXIMIZE_THROUGHPUT, EXPLICIT_ONLY, IN_ORDER */
#define POOL_FLAGS_KNOWN 0xfu  /* HOST_VISIBLE, IPC, KERNEL_TIMESTAMP, KERNEL_MAPPED_TIMESTAMP */
#define SCOPE_FLAGS_KNOWN 0x7u

static cl_context the_context(void) { return ze_cpu_the_device.context; }

/* ---- waiting with a timeout ------------------------------------------------------------------- */

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

typedef ze_result_t (*query_fn)(void *object);

/* Polls `query` until it stops answering NOT_READY or `timeout_ns` passed (UINT64_MAX: never).
 * Polling, rather than blocking in OpenCL, also sees host signals from other threads. */
static ze_result_t poll_until(query_fn query, void *object, uint64_t timeout_ns) {
    uint64_t start = now_ns();
    uint64_t pause = 10000; /* 10 us, doubling up to 1 ms */
    for (;;) {
        ze_result_t r = query(object);
        if (r != ZE_RESULT_NOT_READY) return r;
        uint64_t waited = now_ns() - start;
        if (timeout_ns != UINT64_MAX && waited >= timeout_ns) return ZE_RESULT_NOT_READY;
        uint64_t left = timeout_ns == UINT64_MAX ? pause : timeout_ns - waited;
        uint64_t nap = left < pause ? left : pause;
        struct timespec t = {(time_t)(nap / 1000000000u), (long)(nap % 1000000000u)};
        nanosleep(&t, NULL);
        if (pause < 1000000) pause *= 2;
    }
}

static ze_result_t status_of(cl_event event) {
    cl_int status = CL_QUEUED;
    cl_int err = clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                NULL);
    if (err != CL_SUCCESS) return ze_cpu_result_from_cl(err);
    if (status < 0) return ZE_RESULT_ERROR_DEVICE_LOST; /* the command failed */
    return status == CL_COMPLETE ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

/* ---- event pools and events ------------------------------------------------------------------- */

ze_result_t ze_cpu_event_pool_create(ze_context_handle_t ctx, const ze_event_pool_desc_t *desc,
                                     uint32_t num_devices, ze_device_handle_t *devices,
                                     ze_event_pool_handle_t *out) {
    CHECK_HANDLE((ze_cpu_context_t *)ctx, MAGIC_CONTEXT);
    CHECK_POINTER(desc);
    CHECK_POINTER(out);
    if (desc->flags & ~POOL_FLAGS_KNOWN) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (desc->count == 0 || (num_devices > 0 && devices == NULL))
        return ZE_RESULT_ERROR_INVALID_SIZE;
    for (uint32_t i = 0; i < num_devices; ++i)
        CHECK_HANDLE((ze_cpu_device_t *)devices[i], MAGIC_DEVICE);
    ze_cpu_event_pool_t *pool = calloc(1, sizeof *pool);
    if (pool == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    pool->magic = MAGIC_EVENT_POOL;
    pool->count = desc->count;
    *out = (ze_event_pool_handle_t)pool;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_event_pool_destroy(ze_event_pool_handle_t h) {
    ze_cpu_event_pool_t *pool = (ze_cpu_event_pool_t *)h;
    CHECK_HANDLE(pool, MAGIC_EVENT_POOL);
    pool->magic = MAGIC_DEAD;
    free(pool);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_event_create(ze_event_pool_handle_t h, const ze_event_desc_t *desc,
                                ze_event_handle_t *out) {
    ze_cpu_event_pool_t *pool = (ze_cpu_event_pool_t *)h;
    CHECK_HANDLE(pool, MAGIC_EVENT_POOL);
    CHECK_POINTER(desc);
    CHECK_POINTER(out);
    if ((desc->signal | desc->wait) & ~SCOPE_FLAGS_KNOWN) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (desc->index >= pool->count) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    ze_cpu_event_t *e = calloc(1, sizeof *e);
    if (e == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    e->magic = MAGIC_EVENT;
    *out = (ze_event_handle_t)e;
    return ZE_RESULT_SUCCESS;
}

/* Forgets the pending signal. A user event that commands may wait on is completed first, so
 * they run rather than hang forever. Lock held. */
static void drop_signal(ze_cpu_event_t *e) {
    if (e->signal == NULL) return;
    if (e->signal_is_user) clSetUserEventStatus(e->signal, CL_COMPLETE); /* may be complete */
    clReleaseEvent(e->signal);
    e->signal = NULL;
    e->signal_is_user = false;
}

ze_result_t ze_cpu_event_destroy(ze_event_handle_t h) {
    ze_cpu_event_t *e = (ze_cpu_event_t *)h;
    CHECK_HANDLE(e, MAGIC_EVENT);
    pthread_mutex_lock(&ze_cpu_lock);
    drop_signal(e);
    e->magic = MAGIC_DEAD;
    pthread_mutex_unlock(&ze_cpu_lock);
    free(e);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_event_host_signal(ze_event_handle_t h) {
    ze_cpu_event_t *e = (ze_cpu_event_t *)h;
    CHECK_HANDLE(e, MAGIC_EVENT);
    pthread_mutex_lock(&ze_cpu_lock);
    if (e->signal != NULL && e->signal_is_user) clSetUserEventStatus(e->signal, CL_COMPLETE);
    e->host_signalled = true;
    pthread_mutex_unlock(&ze_cpu_lock);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_event_host_reset(ze_event_handle_t h) {
    ze_cpu_event_t *e = (ze_cpu_event_t *)h;
    CHECK_HANDLE(e, MAGIC_EVENT);
    pthread_mutex_lock(&ze_cpu_lock);
    drop_signal(e);
    e->host_signalled = false;
    pthread_mutex_unlock(&ze_cpu_lock);
    return ZE_RESULT_SUCCESS;
}

/* The OpenCL event a host synchronize may block on (retained), read under the lock; NULL when
 * signalled, nothing is pending, or `*skip` (a user event: only a host signal completes it). */
static cl_event take_pending(const bool *signalled, cl_event const *event, const bool *skip) {
    pthread_mutex_lock(&ze_cpu_lock);
    cl_event pending = *signalled || (skip && *skip) ? NULL : *event;
    if (pending != NULL) clRetainEvent(pending);
    pthread_mutex_unlock(&ze_cpu_lock);
    return pending;
}

/* Query of an event or fence: signalled, else the state of its pending OpenCL event. */
static ze_result_t query_signal(const bool *signalled, cl_event const *event) {
    pthread_mutex_lock(&ze_cpu_lock);
    bool done = *signalled;
    cl_event pending = done ? NULL : *event;
    if (pending != NULL) clRetainEvent(pending);
    pthread_mutex_unlock(&ze_cpu_lock);
    if (pending == NULL) return done ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
    ze_result_t r = status_of(pending);
    clReleaseEvent(pending);
    return r;
}

/* Host synchronize fast path: an unbounded wait blocks in OpenCL on the pending event. */
static void block_on(cl_event pending, uint64_t timeout) {
    if (pending == NULL) return;
    if (timeout == UINT64_MAX) clWaitForEvents(1, &pending);
    clReleaseEvent(pending);
}

static ze_result_t query_event(void *object) {
    ze_cpu_event_t *e = object;
    return query_signal(&e->host_signalled, &e->signal);
}

ze_result_t ze_cpu_event_query_status(ze_event_handle_t h) {
    ze_cpu_event_t *e = (ze_cpu_event_t *)h;
    CHECK_HANDLE(e, MAGIC_EVENT);
    return query_event(e);
}

ze_result_t ze_cpu_event_host_synchronize(ze_event_handle_t h, uint64_t timeout) {
    ze_cpu_event_t *e = (ze_cpu_event_t *)h;
    CHECK_HANDLE(e, MAGIC_EVENT);
    block_on(take_pending(&e->host_signalled, &e->signal, &e->signal_is_user), timeout);
    return poll_until(query_event, e, timeout);
}

/* The OpenCL event a command waiting for `e` must wait for; NULL if none is needed. Lock held. */
static cl_int wait_handle(ze_cpu_event_t *e, cl_event *out) {
    *out = NULL;
    if (e->host_signalled) return CL_SUCCESS;
    if (e->signal == NULL) {
        cl_int err;
        e->signal = clCreateUserEvent(the_context(), &err);
        if (err != CL_SUCCESS) return err;
        e->signal_is_user = true;
    }
    *out = e->signal;
    return CL_SUCCESS;
}

static void CL_CALLBACK complete_user_event(cl_event done, cl_int status, void *user) {
    (void)done;
    cl_event event = user;
    clSetUserEventStatus(event, status < 0 ? status : CL_COMPLETE);
    clReleaseEvent(event);
}

/* Makes the completion of `done` signal `e`. Lock held. */
static void attach_signal(ze_cpu_event_t *e, cl_event done) {
    if (e->host_signalled) return;
    if (e->signal != NULL && e->signal_is_user) {
        /* Commands already wait on the user event: complete it when `done` completes. */
        clRetainEvent(e->signal);
        if (clSetEventCallback(done, CL_COMPLETE, complete_user_event, e->signal) != CL_SUCCESS)
            clReleaseEvent(e->signal);
        return;
    }
    if (e->signal != NULL) clReleaseEvent(e->signal);
    clRetainEvent(done);
    e->signal = done;
    e->signal_is_user = false;
}

/* ---- commands --------------------------------------------------------------------------------- */

static void free_command(ze_cpu_command_t *c) {
    if (c->kind == CMD_LAUNCH && c->u.launch.kernel) clReleaseKernel(c->u.launch.kernel);
    free(c->waits);
    memset(c, 0, sizeof *c);
}

static cl_int enqueue_body(cl_command_queue q, const ze_cpu_command_t *c, cl_uint num_waits,
                           const cl_event *waits, cl_event *done) {
    const ze_cpu_usm_fns_t *usm = &ze_cpu_the_device.usm;
    switch (c->kind) {
    case CMD_LAUNCH:
        return clEnqueueNDRangeKernel(q, c->u.launch.kernel, 3, NULL, c->u.launch.global,
                                      c->u.launch.local, num_waits, waits, done);
    case CMD_COPY:
        return usm->memcpy(q, CL_FALSE, c->u.copy.dst, c->u.copy.src, c->u.copy.size, num_waits,
                           waits, done);
    case CMD_FILL:
        return usm->memfill(q, c->u.fill.dst, c->u.fill.pattern, c->u.fill.pattern_size,
                            c->u.fill.size, num_waits, waits, done);
    case CMD_EVENT_RESET: /* only bookkeeping, see enqueue() */ return CL_SUCCESS;
    case CMD_BARRIER: return clEnqueueBarrierWithWaitList(q, num_waits, waits, done);
    }
    return CL_INVALID_OPERATION;
}

/* Enqueues one command on `q`, resolving its wait events and recording its signal event. */
static ze_result_t enqueue(cl_command_queue q, const ze_cpu_command_t *c) {
    cl_event *waits = calloc(c->num_waits ? c->num_waits : 1, sizeof *waits);
    if (waits == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    pthread_mutex_lock(&ze_cpu_lock);
    cl_uint n = 0;
    cl_int err = CL_SUCCESS;
    for (uint32_t i = 0; i < c->num_waits && err == CL_SUCCESS; ++i) {
        err = wait_handle(c->waits[i], &waits[n]);
        if (waits[n] != NULL) ++n;
    }
    cl_event done = NULL;
    if (err == CL_SUCCESS) err = enqueue_body(q, c, n, n ? waits : NULL, &done);
    if (err == CL_SUCCESS && c->kind == CMD_EVENT_RESET) {
        drop_signal(c->signal);
        c->signal->host_signalled = false;
    } else if (err == CL_SUCCESS && c->signal != NULL && done != NULL) {
        attach_signal(c->signal, done);
    }
    pthread_mutex_unlock(&ze_cpu_lock);
    if (done != NULL) clReleaseEvent(done);
    free(waits);
    return ze_cpu_result_from_cl(err);
}

/* ---- command queues --------------------------------------------------------------------------- */

static ze_result_t check_queue_desc(const ze_command_queue_desc_t *desc) {
    CHECK_POINTER(desc);
    if (desc->flags & ~QUEUE_FLAGS_KNOWN) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if ((unsigned)desc->mode > ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS ||
        (unsigned)desc->priority > ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    /* One queue group with one queue (zeDeviceGetCommandQueueGroupProperties). */
    if (desc->ordinal != 0 || desc->index != 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t new_cl_queue(cl_command_queue *out) {
    cl_int err;
    *out = clCreateCommandQueueWithProperties(the_context(), ze_cpu_the_device.id, NULL, &err);
    return ze_cpu_result_from_cl(err);
}

ze_result_t ze_cpu_queue_create(ze_context_handle_t ctx, ze_device_handle_t dev,
                                const ze_command_queue_desc_t *desc,
                                ze_command_queue_handle_t *out) {
    CHECK_HANDLE((ze_cpu_context_t *)ctx, MAGIC_CONTEXT);
    CHECK_HANDLE((ze_cpu_device_t *)dev, MAGIC_DEVICE);
    CHECK_POINTER(out);
    ze_result_t r = check_queue_desc(desc);
    if (r != ZE_RESULT_SUCCESS) return r;
    ze_cpu_queue_t *q = calloc(1, sizeof *q);
    if (q == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    if ((r = new_cl_queue(&q->queue)) != ZE_RESULT_SUCCESS) {
        free(q);
        return r;
    }
    q->synchronous = desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    q->magic = MAGIC_QUEUE;
    *out = (ze_command_queue_handle_t)q;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_queue_destroy(ze_command_queue_handle_t h) {
    ze_cpu_queue_t *q = (ze_cpu_queue_t *)h;
    CHECK_HANDLE(q, MAGIC_QUEUE);
    q->magic = MAGIC_DEAD;
    clFinish(q->queue);
    clReleaseCommandQueue(q->queue);
    if (q->last) clReleaseEvent(q->last);
    free(q);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t check_lists(uint32_t n, ze_command_list_handle_t *lists) {
    if (n == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    CHECK_POINTER(lists);
    for (uint32_t i = 0; i < n; ++i) {
        ze_cpu_list_t *l = (ze_cpu_list_t *)lists[i];
        CHECK_HANDLE(l, MAGIC_LIST);
        if (l->immediate || !l->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    return ZE_RESULT_SUCCESS;
}

/* A marker after everything enqueued so far; it becomes the queue's and the fence's event. */
static ze_result_t mark_end(ze_cpu_queue_t *q, ze_cpu_fence_t *fence) {
    cl_event marker;
    cl_int err = clEnqueueMarkerWithWaitList(q->queue, 0, NULL, &marker);
    if (err != CL_SUCCESS) return ze_cpu_result_from_cl(err);
    pthread_mutex_lock(&ze_cpu_lock);
    if (q->last) clReleaseEvent(q->last);
    q->last = marker;
    if (fence != NULL) {
        if (fence->marker) clReleaseEvent(fence->marker);
        clRetainEvent(marker);
        fence->marker = marker;
        fence->signalled = false;
    }
    pthread_mutex_unlock(&ze_cpu_lock);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_queue_execute(ze_command_queue_handle_t h, uint32_t n,
                                 ze_command_list_handle_t *lists, ze_fence_handle_t fence_h) {
    ze_cpu_queue_t *q = (ze_cpu_queue_t *)h;
    CHECK_HANDLE(q, MAGIC_QUEUE);
    ze_cpu_fence_t *fence = (ze_cpu_fence_t *)fence_h;
    if (fence != NULL) {
        CHECK_HANDLE(fence, MAGIC_FENCE);
        if (fence->queue != q) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    ze_result_t r = check_lists(n, lists);
    for (uint32_t i = 0; i < n && r == ZE_RESULT_SUCCESS; ++i) {
        const ze_cpu_list_t *l = (const ze_cpu_list_t *)lists[i];
        for (uint32_t j = 0; j < l->count && r == ZE_RESULT_SUCCESS; ++j)
            r = enqueue(q->queue, &l->commands[j]);
    }
    if (r != ZE_RESULT_SUCCESS) return r;
    if ((r = mark_end(q, fence)) != ZE_RESULT_SUCCESS) return r;
    clFlush(q->queue);
    if (q->synchronous) clFinish(q->queue);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t query_queue(void *object) {
    ze_cpu_queue_t *q = object;
    pthread_mutex_lock(&ze_cpu_lock);
    cl_event last = q->last;
    if (last != NULL) clRetainEvent(last);
    pthread_mutex_unlock(&ze_cpu_lock);
    if (last == NULL) return ZE_RESULT_SUCCESS; /* nothing executed yet */
    ze_result_t r = status_of(last);
    clReleaseEvent(last);
    return r;
}

ze_result_t ze_cpu_queue_synchronize(ze_command_queue_handle_t h, uint64_t timeout) {
    ze_cpu_queue_t *q = (ze_cpu_queue_t *)h;
    CHECK_HANDLE(q, MAGIC_QUEUE);
    if (timeout == UINT64_MAX) return ze_cpu_result_from_cl(clFinish(q->queue));
    clFlush(q->queue);
    return poll_until(query_queue, q, timeout);
}

/* ---- fences ----------------------------------------------------------------------------------- */

ze_result_t ze_cpu_fence_create(ze_command_queue_handle_t h, const ze_fence_desc_t *desc,
                                ze_fence_handle_t *out) {
    ze_cpu_queue_t *q = (ze_cpu_queue_t *)h;
    CHECK_HANDLE(q, MAGIC_QUEUE);
    CHECK_POINTER(desc);
    CHECK_POINTER(out);
    if (desc->flags & ~(ze_fence_flags_t)ZE_FENCE_FLAG_SIGNALED)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    ze_cpu_fence_t *f = calloc(1, sizeof *f);
    if (f == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    f->magic = MAGIC_FENCE;
    f->queue = q;
    f->signalled = (desc->flags & ZE_FENCE_FLAG_SIGNALED) != 0;
    *out = (ze_fence_handle_t)f;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_fence_destroy(ze_fence_handle_t h) {
    ze_cpu_fence_t *f = (ze_cpu_fence_t *)h;
    CHECK_HANDLE(f, MAGIC_FENCE);
    f->magic = MAGIC_DEAD;
    if (f->marker) clReleaseEvent(f->marker);
    free(f);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t query_fence(void *object) {
    ze_cpu_fence_t *f = object;
    return query_signal(&f->signalled, &f->marker);
}

ze_result_t ze_cpu_fence_query_status(ze_fence_handle_t h) {
    ze_cpu_fence_t *f = (ze_cpu_fence_t *)h;
    CHECK_HANDLE(f, MAGIC_FENCE);
    return query_fence(f);
}

ze_result_t ze_cpu_fence_host_synchronize(ze_fence_handle_t h, uint64_t timeout) {
    ze_cpu_fence_t *f = (ze_cpu_fence_t *)h;
    CHECK_HANDLE(f, MAGIC_FENCE);
    block_on(take_pending(&f->signalled, &f->marker, NULL), timeout);
    return poll_until(query_fence, f, timeout);
}

ze_result_t ze_cpu_fence_reset(ze_fence_handle_t h) {
    ze_cpu_fence_t *f = (ze_cpu_fence_t *)h;
    CHECK_HANDLE(f, MAGIC_FENCE);
    pthread_mutex_lock(&ze_cpu_lock);
    if (f->marker) clReleaseEvent(f->marker);
    f->marker = NULL;
    f->signalled = false;
    pthread_mutex_unlock(&ze_cpu_lock);
    return ZE_RESULT_SUCCESS;
}

/* ---- command lists ---------------------------------------------------------------------------- */

ze_result_t ze_cpu_list_create(ze_context_handle_t ctx, ze_device_handle_t dev,
                               const ze_command_list_desc_t *desc, ze_command_list_handle_t *out) {
    CHECK_HANDLE((ze_cpu_context_t *)ctx, MAGIC_CONTEXT);
    CHECK_HANDLE((ze_cpu_device_t *)dev, MAGIC_DEVICE);
    CHECK_POINTER(desc);
    CHECK_POINTER(out);
    if (desc->flags & ~LIST_FLAGS_KNOWN) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (desc->commandQueueGroupOrdinal != 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    ze_cpu_list_t *l = calloc(1, sizeof *l);
    if (l == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    l->magic = MAGIC_LIST;
    *out = (ze_command_list_handle_t)l;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_list_create_immediate(ze_context_handle_t ctx, ze_device_handle_t dev,
                                         const ze_command_queue_desc_t *desc,
                                         ze_command_list_handle_t *out) {
    CHECK_HANDLE((ze_cpu_context_t *)ctx, MAGIC_CONTEXT);
    CHECK_HANDLE((ze_cpu_device_t *)dev, MAGIC_DEVICE);
    CHECK_POINTER(out);
    ze_result_t r = check_queue_desc(desc);
    if (r != ZE_RESULT_SUCCESS) return r;
    ze_cpu_list_t *l = calloc(1, sizeof *l);
    if (l == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    if ((r = new_cl_queue(&l->queue)) != ZE_RESULT_SUCCESS) {
        free(l);
        return r;
    }
    l->immediate = true;
    l->synchronous = desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    l->magic = MAGIC_LIST;
    *out = (ze_command_list_handle_t)l;
    return ZE_RESULT_SUCCESS;
}

static void clear_commands(ze_cpu_list_t *l) {
    for (uint32_t i = 0; i < l->count; ++i) free_command(&l->commands[i]);
    l->count = 0;
}

ze_result_t ze_cpu_list_destroy(ze_command_list_handle_t h) {
    ze_cpu_list_t *l = (ze_cpu_list_t *)h;
    CHECK_HANDLE(l, MAGIC_LIST);
    l->magic = MAGIC_DEAD;
    clear_commands(l);
    free(l->commands);
    if (l->queue) {
        clFinish(l->queue);
        clReleaseCommandQueue(l->queue);
    }
    free(l);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_list_close(ze_command_list_handle_t h) {
    ze_cpu_list_t *l = (ze_cpu_list_t *)h;
    CHECK_HANDLE(l, MAGIC_LIST);
    if (l->immediate) return ZE_RESULT_SUCCESS;
    l->closed = true;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_list_reset(ze_command_list_handle_t h) {
    ze_cpu_list_t *l = (ze_cpu_list_t *)h;
    CHECK_HANDLE(l, MAGIC_LIST);
    if (l->immediate) return ze_cpu_result_from_cl(clFinish(l->queue));
    clear_commands(l);
    l->closed = false;
    return ZE_RESULT_SUCCESS;
}

/* Fills the event fields of a command after checking the handles. */
static ze_result_t set_events(ze_cpu_command_t *c, ze_event_handle_t signal, uint32_t num_waits,
                              ze_event_handle_t *waits) {
    if (signal != NULL) CHECK_HANDLE((ze_cpu_event_t *)signal, MAGIC_EVENT);
    if (num_waits > 0 && waits == NULL) return ZE_RESULT_ERROR_INVALID_SIZE;
    for (uint32_t i = 0; i < num_waits; ++i) CHECK_HANDLE((ze_cpu_event_t *)waits[i], MAGIC_EVENT);
    c->signal = (ze_cpu_event_t *)signal;
    c->num_waits = num_waits;
    c->waits = calloc(num_waits ? num_waits : 1, sizeof *c->waits);
    if (c->waits == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    if (num_waits > 0) memcpy(c->waits, waits, num_waits * sizeof *c->waits);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t check_list(ze_cpu_list_t *l) {
    CHECK_HANDLE(l, MAGIC_LIST);
    return !l->immediate && l->closed ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_SUCCESS;
}

/* Runs the command now (immediate list) or keeps it (regular list); owns `c` either way. */
static ze_result_t submit(ze_cpu_list_t *l, ze_cpu_command_t *c) {
    if (l->immediate) {
        ze_result_t r = enqueue(l->queue, c);
        if (c->kind == CMD_LAUNCH) c->u.launch.kernel = NULL; /* not ours: the kernel itself */
        free_command(c);
        if (r == ZE_RESULT_SUCCESS) clFlush(l->queue);
        if (r == ZE_RESULT_SUCCESS && l->synchronous) r = ze_cpu_result_from_cl(clFinish(l->queue));
        return r;
    }
    if (l->count == l->capacity) {
        uint32_t cap = l->capacity ? 2 * l->capacity : 16;
        ze_cpu_command_t *p = realloc(l->commands, cap * sizeof *p);
        if (p == NULL) {
            free_command(c);
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        l->commands = p;
        l->capacity = cap;
    }
    l->commands[l->count++] = *c;
    return ZE_RESULT_SUCCESS;
}

/* Common start of every append: list state and events. */
#define BEGIN_APPEND(l, c, kind_, signal, n, waits)                                                \
    ze_cpu_list_t *l = (ze_cpu_list_t *)h;                                                         \
    ze_result_t r_ = check_list(l);                                                                \
    if (r_ != ZE_RESULT_SUCCESS) return r_;                                                        \
    ze_cpu_command_t c;                                                                            \
    memset(&c, 0, sizeof c);                                                                       \
    c.kind = kind_;                                                                                \
    if ((r_ = set_events(&c, signal, n, waits)) != ZE_RESULT_SUCCESS) {                            \
        free_command(&c);                                                                          \
        return r_;                                                                                 \
    }

ze_result_t ze_cpu_list_append_barrier(ze_command_list_handle_t h, ze_event_handle_t signal,
                                       uint32_t num_waits, ze_event_handle_t *waits) {
    BEGIN_APPEND(l, c, CMD_BARRIER, signal, num_waits, waits);
    return submit(l, &c);
}

ze_result_t ze_cpu_list_append_signal_event(ze_command_list_handle_t h, ze_event_handle_t event) {
    if (event == NULL) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    BEGIN_APPEND(l, c, CMD_BARRIER, event, 0, NULL);
    return submit(l, &c);
}

ze_result_t ze_cpu_list_append_wait_on_events(ze_command_list_handle_t h, uint32_t num_events,
                                              ze_event_handle_t *events) {
    if (events == NULL) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    BEGIN_APPEND(l, c, CMD_BARRIER, NULL, num_events, events);
    return submit(l, &c);
}

ze_result_t ze_cpu_list_append_event_reset(ze_command_list_handle_t h, ze_event_handle_t event) {
    if (event == NULL) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    BEGIN_APPEND(l, c, CMD_EVENT_RESET, event, 0, NULL);
    return submit(l, &c);
}

ze_result_t ze_cpu_list_append_memory_copy(ze_command_list_handle_t h, void *dst, const void *src,
                                           size_t size, ze_event_handle_t signal,
                                           uint32_t num_waits, ze_event_handle_t *waits) {
    CHECK_POINTER(dst);
    CHECK_POINTER(src);
    BEGIN_APPEND(l, c, CMD_COPY, signal, num_waits, waits);
    c.u.copy.dst = dst;
    c.u.copy.src = src;
    c.u.copy.size = size;
    return submit(l, &c);
}

ze_result_t ze_cpu_list_append_memory_fill(ze_command_list_handle_t h, void *dst,
                                           const void *pattern, size_t pattern_size, size_t size,
                                           ze_event_handle_t signal, uint32_t num_waits,
                                           ze_event_handle_t *waits) {
    CHECK_POINTER(dst);
    CHECK_POINTER(pattern);
    bool power_of_two = pattern_size != 0 && (pattern_size & (pattern_size - 1)) == 0;
    if (!power_of_two || pattern_size > MAX_FILL_PATTERN || size % pattern_size != 0)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    BEGIN_APPEND(l, c, CMD_FILL, signal, num_waits, waits);
    c.u.fill.dst = dst;
    memcpy(c.u.fill.pattern, pattern, pattern_size); /* the caller may reuse its pattern */
    c.u.fill.pattern_size = pattern_size;
    c.u.fill.size = size;
    return submit(l, &c);
}

static ze_result_t prepare_launch(ze_cpu_list_t *l, ze_cpu_kernel_t *k, const ze_group_count_t *g,
                                  ze_cpu_command_t *c) {
    ze_result_t r = ze_cpu_kernel_ready(k);
    if (r != ZE_RESULT_SUCCESS) return r;
    uint32_t count[3] = {g->groupCountX, g->groupCountY, g->groupCountZ};
    for (int d = 0; d < 3; ++d) {
        c->u.launch.local[d] = k->group_size[d];
        c->u.launch.global[d] = (size_t)count[d] * k->group_size[d];
    }
    if (l->immediate) {
        c->u.launch.kernel = k->kernel; /* OpenCL takes the arguments at enqueue time */
        return ZE_RESULT_SUCCESS;
    }
    return ze_cpu_kernel_snapshot(k, &c->u.launch.kernel);
}

ze_result_t ze_cpu_list_append_launch_kernel(ze_command_list_handle_t h, ze_kernel_handle_t kh,
                                             const ze_group_count_t *groups,
                                             ze_event_handle_t signal, uint32_t num_waits,
                                             ze_event_handle_t *waits) {
    ze_cpu_kernel_t *k = (ze_cpu_kernel_t *)kh;
    CHECK_HANDLE(k, MAGIC_KERNEL);
    CHECK_POINTER(groups);
    BEGIN_APPEND(l, c, CMD_LAUNCH, signal, num_waits, waits);
    ze_result_t r = prepare_launch(l, k, groups, &c);
    if (r != ZE_RESULT_SUCCESS) {
        if (l->immediate) c.u.launch.kernel = NULL;
        free_command(&c);
        return r;
    }
    return submit(l, &c);
}
