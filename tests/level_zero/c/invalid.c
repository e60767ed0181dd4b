/* Invalid arguments get the documented results and never crash: NULL handles, NULL output
 * pointers, bad enumerations, handles of the wrong kind. Prints "ok" when every check passed. */
#include "ze_common.h"

#define NULL_HANDLE ZE_RESULT_ERROR_INVALID_NULL_HANDLE
#define NULL_POINTER ZE_RESULT_ERROR_INVALID_NULL_POINTER

static void null_handles(const ze_env_t *env) {
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    uint32_t n = 0;
    EXPECT(zeDeviceGet(NULL, &n, NULL), NULL_HANDLE);
    EXPECT(zeDeviceGetProperties(NULL, &props), NULL_HANDLE);
    ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t ctx;
    EXPECT(zeContextCreate(NULL, &cdesc, &ctx), NULL_HANDLE);
    EXPECT(zeContextDestroy(NULL), NULL_HANDLE);
    ze_host_mem_alloc_desc_t h = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *ptr;
    EXPECT(zeMemAllocHost(NULL, &h, 64, 0, &ptr), NULL_HANDLE);
    EXPECT(zeMemFree(NULL, &ptr), NULL_HANDLE);
    EXPECT(zeModuleDestroy(NULL), NULL_HANDLE);
    EXPECT(zeKernelDestroy(NULL), NULL_HANDLE);
    EXPECT(zeKernelSetArgumentValue(NULL, 0, 4, &n), NULL_HANDLE);
    EXPECT(zeKernelSetGroupSize(NULL, 1, 1, 1), NULL_HANDLE);
    EXPECT(zeCommandListClose(NULL), NULL_HANDLE);
    EXPECT(zeCommandListAppendBarrier(NULL, NULL, 0, NULL), NULL_HANDLE);
    EXPECT(zeCommandQueueSynchronize(NULL, 0), NULL_HANDLE);
    EXPECT(zeEventHostSignal(NULL), NULL_HANDLE);
    EXPECT(zeEventQueryStatus(NULL), NULL_HANDLE);
    EXPECT(zeFenceQueryStatus(NULL), NULL_HANDLE);
    EXPECT(zeModuleBuildLogDestroy(NULL), NULL_HANDLE);
    (void)env;
}

static void null_pointers(const ze_env_t *env) {
    EXPECT(zeDriverGet(NULL, NULL), NULL_POINTER);
    EXPECT(zeDeviceGet(env->driver, NULL, NULL), NULL_POINTER);
    EXPECT(zeDeviceGetProperties(env->device, NULL), NULL_POINTER);
    EXPECT(zeDeviceGetComputeProperties(env->device, NULL), NULL_POINTER);
    EXPECT(zeContextCreate(env->driver, NULL, NULL), NULL_POINTER);
    ze_host_mem_alloc_desc_t h = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    EXPECT(zeMemAllocHost(env->context, &h, 64, 0, NULL), NULL_POINTER);
    EXPECT(zeMemFree(env->context, NULL), NULL_POINTER);
    ze_module_handle_t module;
    EXPECT(zeModuleCreate(env->context, env->device, NULL, &module, NULL), NULL_POINTER);
    ze_module_desc_t mdesc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                              .format = ZE_MODULE_FORMAT_IL_SPIRV,
                              .inputSize = 20};
    EXPECT(zeModuleCreate(env->context, env->device, &mdesc, &module, NULL), NULL_POINTER);
}

static void bad_enumerations(const ze_env_t *env) {
    static const uint32_t header[5] = {0x07230203u, 0x00010400u, 0, 1, 0};
    ze_module_desc_t mdesc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                              .format = (ze_module_format_t)7,
                              .inputSize = sizeof header,
                              .pInputModule = (const uint8_t *)header};
    ze_module_handle_t module;
    EXPECT(zeModuleCreate(env->context, env->device, &mdesc, &module, NULL),
           ZE_RESULT_ERROR_INVALID_ENUMERATION);
    ze_command_queue_desc_t qdesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                     .mode = (ze_command_queue_mode_t)9};
    ze_command_queue_handle_t queue;
    EXPECT(zeCommandQueueCreate(env->context, env->device, &qdesc, &queue),
           ZE_RESULT_ERROR_INVALID_ENUMERATION);
    /* A bare header (no memory model) passes our structure check; the runtime rejects it. */
    mdesc.format = ZE_MODULE_FORMAT_IL_SPIRV;
    EXPECT(zeModuleCreate(env->context, env->device, &mdesc, &module, NULL),
           ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
}

/* Handles of one kind passed where another is expected: our driver rejects them (the
 * validation layer does not look at them, so this part runs without it only). */
static void wrong_kinds(const ze_env_t *env) {
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    EXPECT(zeDeviceGetProperties((ze_device_handle_t)env->context, &props), NULL_HANDLE);
    EXPECT(zeContextDestroy((ze_context_handle_t)env->device), NULL_HANDLE);
    EXPECT(zeEventHostSignal((ze_event_handle_t)env->context), NULL_HANDLE);
}

int main(int argc, char **argv) {
    ze_env_t env = ze_setup();
    null_handles(&env);
    null_pointers(&env);
    bad_enumerations(&env);
    if (argc > 1 && strcmp(argv[1], "wrong-kinds") == 0) wrong_kinds(&env);
    CHECK(zeContextDestroy(env.context));
    printf("ok\n");
    return 0;
}
