/* Memory, events and fences: USM allocations of the three kinds, copies and fills, events
 * signalled by commands and by the host, waits on events, fences and queue synchronisation
 * with timeouts. Prints "ok" when every check passed. */
#include <time.h>

#include "ze_common.h"

#define COUNT 256

static void check_memory(const ze_env_t *env) {
    ze_device_mem_alloc_desc_t d = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t h = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *shared, *device, *host;
    CHECK(zeMemAllocShared(env->context, &d, &h, COUNT * 4, 0, env->device, &shared));
    CHECK(zeMemAllocDevice(env->context, &d, COUNT * 4, 256, env->device, &device));
    CHECK(zeMemAllocHost(env->context, &h, COUNT * 4, 0, &host));
    REQUIRE((uintptr_t)shared % 128 == 0 && (uintptr_t)device % 256 == 0);
    EXPECT(zeMemAllocHost(env->context, &h, COUNT, 3, &host), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
    EXPECT(zeMemAllocHost(env->context, &h, 0, 0, &host), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    CHECK(zeMemAllocHost(env->context, &h, COUNT * 4, 0, &host));

    const void *ptrs[3] = {shared, device, host};
    const ze_memory_type_t types[3] = {ZE_MEMORY_TYPE_SHARED, ZE_MEMORY_TYPE_DEVICE,
                                       ZE_MEMORY_TYPE_HOST};
    for (int i = 0; i < 3; ++i) {
        ze_memory_allocation_properties_t p = {.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
        CHECK(zeMemGetAllocProperties(env->context, ptrs[i], &p, NULL));
        REQUIRE(p.type == types[i]);
    }
    int on_stack = 0;
    ze_memory_allocation_properties_t p = {.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
    CHECK(zeMemGetAllocProperties(env->context, &on_stack, &p, NULL));
    REQUIRE(p.type == ZE_MEMORY_TYPE_UNKNOWN);

    /* fill device memory, copy device -> shared -> host and into plain host memory */
    ze_command_list_handle_t list = ze_immediate_list(env, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    float pattern = 2.5f;
    CHECK(zeCommandListAppendMemoryFill(list, device, &pattern, sizeof pattern, COUNT * 4, NULL, 0,
                                        NULL));
    EXPECT(zeCommandListAppendMemoryFill(list, device, &pattern, 3, 12, NULL, 0, NULL),
           ZE_RESULT_ERROR_INVALID_SIZE);
    CHECK(zeCommandListAppendMemoryCopy(list, shared, device, COUNT * 4, NULL, 0, NULL));
    CHECK(zeCommandListAppendMemoryCopy(list, host, shared, COUNT * 4, NULL, 0, NULL));
    float plain[COUNT];
    CHECK(zeCommandListAppendMemoryCopy(list, plain, host, COUNT * 4, NULL, 0, NULL));
    for (int i = 0; i < COUNT; ++i) REQUIRE(plain[i] == 2.5f && ((float *)shared)[i] == 2.5f);

    /* only base pointers of allocations can be freed */
    EXPECT(zeMemFree(env->context, (char *)shared + 4), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT(zeMemFree(env->context, &on_stack), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    CHECK(zeCommandListDestroy(list));
    for (int i = 0; i < 3; ++i) CHECK(zeMemFree(env->context, (void *)ptrs[i]));
}

static ze_event_handle_t make_event(ze_event_pool_handle_t pool, uint32_t index) {
    ze_event_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                            .index = index,
                            .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                            .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t event;
    CHECK(zeEventCreate(pool, &desc, &event));
    return event;
}

static void check_host_events(ze_event_handle_t e) {
    EXPECT(zeEventQueryStatus(e), ZE_RESULT_NOT_READY);
    EXPECT(zeEventHostSynchronize(e, 0), ZE_RESULT_NOT_READY);
    EXPECT(zeEventHostSynchronize(e, 1000000), ZE_RESULT_NOT_READY); /* 1 ms */
    CHECK(zeEventHostSignal(e));
    CHECK(zeEventQueryStatus(e));
    CHECK(zeEventHostSynchronize(e, UINT64_MAX));
    CHECK(zeEventHostReset(e));
    EXPECT(zeEventQueryStatus(e), ZE_RESULT_NOT_READY);
}

/* A command waits for an event the host signals later. */
static void check_device_waits(const ze_env_t *env, ze_event_handle_t gate, ze_event_handle_t done,
                               ze_event_handle_t copied) {
    ze_command_list_handle_t list = ze_immediate_list(env, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    int *buf = ze_shared(env, COUNT * sizeof(int));
    int value = 7;
    CHECK(zeCommandListAppendWaitOnEvents(list, 1, &gate));
    CHECK(zeCommandListAppendMemoryFill(list, buf, &value, sizeof value, COUNT * sizeof(int),
                                        copied, 0, NULL));
    CHECK(zeCommandListAppendSignalEvent(list, done));
    struct timespec pause = {0, 20000000};
    nanosleep(&pause, NULL);
    EXPECT(zeEventQueryStatus(done), ZE_RESULT_NOT_READY);
    EXPECT(zeEventQueryStatus(copied), ZE_RESULT_NOT_READY);
    CHECK(zeEventHostSignal(gate));
    CHECK(zeEventHostSynchronize(done, 5000000000ull));
    CHECK(zeEventQueryStatus(copied));
    for (int i = 0; i < COUNT; ++i) REQUIRE(buf[i] == 7);

    /* reset on the device, then a barrier that signals again */
    CHECK(zeCommandListAppendEventReset(list, done));
    CHECK(zeCommandListAppendBarrier(list, done, 1, &copied));
    CHECK(zeEventHostSynchronize(done, UINT64_MAX));
    CHECK(zeCommandListDestroy(list));
    CHECK(zeMemFree(env->context, buf));
}

static void check_fences(const ze_env_t *env, ze_event_handle_t gate) {
    ze_command_queue_desc_t qdesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
    ze_command_queue_handle_t queue;
    CHECK(zeCommandQueueCreate(env->context, env->device, &qdesc, &queue));
    CHECK(zeCommandQueueSynchronize(queue, 0)); /* nothing submitted yet */
    ze_fence_desc_t fdesc = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ze_fence_handle_t fence, signalled;
    CHECK(zeFenceCreate(queue, &fdesc, &fence));
    fdesc.flags = ZE_FENCE_FLAG_SIGNALED;
    CHECK(zeFenceCreate(queue, &fdesc, &signalled));
    CHECK(zeFenceQueryStatus(signalled));
    EXPECT(zeFenceQueryStatus(fence), ZE_RESULT_NOT_READY);
    EXPECT(zeFenceHostSynchronize(fence, 1000), ZE_RESULT_NOT_READY);

    int *buf = ze_shared(env, COUNT * sizeof(int));
    int value = 3;
    ze_command_list_desc_t ldesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t list;
    CHECK(zeCommandListCreate(env->context, env->device, &ldesc, &list));
    CHECK(zeCommandListAppendWaitOnEvents(list, 1, &gate));
    CHECK(zeCommandListAppendMemoryFill(list, buf, &value, sizeof value, COUNT * sizeof(int), NULL,
                                        0, NULL));
    CHECK(zeCommandListClose(list));
    CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    EXPECT(zeCommandQueueSynchronize(queue, 0), ZE_RESULT_NOT_READY);
    EXPECT(zeCommandQueueSynchronize(queue, 2000000), ZE_RESULT_NOT_READY);
    EXPECT(zeFenceQueryStatus(fence), ZE_RESULT_NOT_READY);
    CHECK(zeEventHostSignal(gate));
    CHECK(zeFenceHostSynchronize(fence, UINT64_MAX));
    CHECK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    for (int i = 0; i < COUNT; ++i) REQUIRE(buf[i] == 3);
    CHECK(zeFenceReset(fence));
    EXPECT(zeFenceQueryStatus(fence), ZE_RESULT_NOT_READY);

    /* the list runs again after a reset of list and event */
    value = 0;
    buf[0] = 99;
    CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    CHECK(zeFenceHostSynchronize(fence, UINT64_MAX));
    REQUIRE(buf[0] == 3); /* the fill pattern was copied at append time */
    CHECK(zeCommandListReset(list));
    CHECK(zeCommandListClose(list));
    CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
    CHECK(zeCommandQueueSynchronize(queue, UINT64_MAX));

    CHECK(zeFenceDestroy(fence));
    CHECK(zeFenceDestroy(signalled));
    CHECK(zeCommandListDestroy(list));
    CHECK(zeCommandQueueDestroy(queue));
    CHECK(zeMemFree(env->context, buf));
}

int main(void) {
    ze_env_t env = ze_setup();
    check_memory(&env);
    ze_event_pool_desc_t pdesc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                  .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                                  .count = 8};
    ze_event_pool_handle_t pool;
    CHECK(zeEventPoolCreate(env.context, &pdesc, 1, &env.device, &pool));
    ze_event_desc_t bad = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = 8};
    ze_event_handle_t unused;
    EXPECT(zeEventCreate(pool, &bad, &unused), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_event_handle_t events[4];
    for (uint32_t i = 0; i < 4; ++i) events[i] = make_event(pool, i);
    check_host_events(events[0]);
    check_device_waits(&env, events[0], events[1], events[2]);
    CHECK(zeEventHostReset(events[0]));
    check_fences(&env, events[0]);
    for (int i = 0; i < 4; ++i) CHECK(zeEventDestroy(events[i]));
    CHECK(zeEventPoolDestroy(pool));
    CHECK(zeContextDestroy(env.context));
    printf("ok\n");
    return 0;
}
