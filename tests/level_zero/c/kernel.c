/* Runs axpy_group (tests/level_zero/test_ze_driver.py has its IR) through Level Zero:
 *   kernel <spv> immediate   launch on an immediate command list
 *   kernel <spv> regular     two launches recorded in a regular list, with alpha and x changed
 *                            between the appends, then executed on a queue
 *   kernel <spv> native      module from zeModuleGetNativeBinary, then as "immediate"
 * Kernel arguments: alpha (f32), x (pointer), size of x (i64), Y (pointer to the member
 * pointers), shapes of the members (pointer to i64), group size (i64). Y_g[i] += alpha * x[i].
 * Prints the inputs and the results, one array per line, for the pytest side to check. */
#include "ze_common.h"

#define N 37
#define G 3

static ze_module_handle_t load_module(const ze_env_t *env, const uint8_t *data, size_t size,
                                      ze_module_format_t format) {
    ze_module_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                             .format = format,
                             .inputSize = size,
                             .pInputModule = data,
                             .pBuildFlags = "-ze-opt-large-register-file"};
    ze_module_handle_t module;
    ze_module_build_log_handle_t log;
    CHECK(zeModuleCreate(env->context, env->device, &desc, &module, &log));
    size_t log_size = 0;
    CHECK(zeModuleBuildLogGetString(log, &log_size, NULL));
    REQUIRE(log_size >= 1);
    CHECK(zeModuleBuildLogDestroy(log));
    return module;
}

static ze_kernel_handle_t make_kernel(ze_module_handle_t module) {
    uint32_t n = 0;
    CHECK(zeModuleGetKernelNames(module, &n, NULL));
    REQUIRE(n == 1);
    const char *names[1];
    CHECK(zeModuleGetKernelNames(module, &n, names));
    REQUIRE(strcmp(names[0], "axpy_group") == 0);
    ze_kernel_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "nope"};
    ze_kernel_handle_t kernel;
    EXPECT(zeKernelCreate(module, &desc, &kernel), ZE_RESULT_ERROR_INVALID_KERNEL_NAME);
    desc.pKernelName = "axpy_group";
    CHECK(zeKernelCreate(module, &desc, &kernel));
    ze_kernel_properties_t props = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    CHECK(zeKernelGetProperties(kernel, &props));
    printf("num_args=%u\n", props.numKernelArgs);
    printf("required_group_size=%u %u %u\n", props.requiredGroupSizeX, props.requiredGroupSizeY,
           props.requiredGroupSizeZ);
    printf("required_subgroup_size=%u\n", props.requiredSubgroupSize);
    size_t size = 0;
    CHECK(zeKernelGetName(kernel, &size, NULL));
    char name[64];
    REQUIRE(size <= sizeof name);
    CHECK(zeKernelGetName(kernel, &size, name));
    printf("kernel_name=%s\n", name);
    uint32_t gx, gy, gz;
    CHECK(zeKernelSuggestGroupSize(kernel, 64, 1, 1, &gx, &gy, &gz));
    printf("suggested_group_size=%u %u %u\n", gx, gy, gz);
    CHECK(zeKernelSetGroupSize(kernel, props.requiredGroupSizeX, props.requiredGroupSizeY,
                               props.requiredGroupSizeZ));
    return kernel;
}

typedef struct buffers {
    float *x1, *x2, *members[G];
    float **member_ptrs;
    int64_t *shapes;
} buffers_t;

static buffers_t make_buffers(const ze_env_t *env) {
    buffers_t b;
    b.x1 = ze_shared(env, N * sizeof(float));
    b.x2 = ze_shared(env, N * sizeof(float));
    b.member_ptrs = ze_shared(env, G * sizeof(float *));
    b.shapes = ze_shared(env, G * sizeof(int64_t));
    for (int g = 0; g < G; ++g) {
        b.members[g] = ze_shared(env, N * sizeof(float));
        b.member_ptrs[g] = b.members[g];
        b.shapes[g] = N;
        for (int i = 0; i < N; ++i) b.members[g][i] = (float)(100 * g + i);
    }
    for (int i = 0; i < N; ++i) {
        b.x1[i] = 0.5f * (float)i;
        b.x2[i] = 1.0f + (float)i;
    }
    return b;
}

static void print_array(const char *label, const float *a) {
    printf("%s=", label);
    for (int i = 0; i < N; ++i) printf("%s%.9g", i ? " " : "", a[i]);
    printf("\n");
}

static void set_args(ze_kernel_handle_t k, float alpha, float *x, const buffers_t *b) {
    int64_t n = N, groups = G;
    CHECK(zeKernelSetArgumentValue(k, 0, sizeof alpha, &alpha));
    CHECK(zeKernelSetArgumentValue(k, 1, sizeof x, &x));
    CHECK(zeKernelSetArgumentValue(k, 2, sizeof n, &n));
    CHECK(zeKernelSetArgumentValue(k, 3, sizeof b->member_ptrs, &b->member_ptrs));
    CHECK(zeKernelSetArgumentValue(k, 4, sizeof b->shapes, &b->shapes));
    CHECK(zeKernelSetArgumentValue(k, 5, sizeof groups, &groups));
}

static void check_argument_errors(ze_kernel_handle_t k) {
    float alpha = 1.0f;
    double wide = 1.0;
    EXPECT(zeKernelSetArgumentValue(k, 6, sizeof alpha, &alpha),
           ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX);
    EXPECT(zeKernelSetArgumentValue(k, 0, sizeof wide, &wide),
           ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
    EXPECT(zeKernelSetArgumentValue(k, 1, 4, &alpha), ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
    /* A NULL value for a pointer argument is a null pointer. */
    CHECK(zeKernelSetArgumentValue(k, 1, sizeof(void *), NULL));
}

static void run_immediate(const ze_env_t *env, ze_kernel_handle_t k, const buffers_t *b) {
    ze_command_list_handle_t list = ze_immediate_list(env, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    ze_group_count_t groups = {G, 1, 1};
    /* Not every argument set yet: the launch is refused. */
    EXPECT(zeCommandListAppendLaunchKernel(list, k, &groups, NULL, 0, NULL),
           ZE_RESULT_ERROR_INVALID_ARGUMENT);
    set_args(k, 2.0f, b->x1, b);
    CHECK(zeCommandListAppendLaunchKernel(list, k, &groups, NULL, 0, NULL));
    CHECK(zeCommandListDestroy(list));
}

static void run_regular(const ze_env_t *env, ze_kernel_handle_t k, const buffers_t *b) {
    ze_command_queue_desc_t qdesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                     .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ze_command_queue_handle_t queue;
    CHECK(zeCommandQueueCreate(env->context, env->device, &qdesc, &queue));
    ze_command_list_desc_t ldesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t list;
    CHECK(zeCommandListCreate(env->context, env->device, &ldesc, &list));
    ze_group_count_t groups = {G, 1, 1};
    set_args(k, 2.0f, b->x1, b);
    CHECK(zeCommandListAppendLaunchKernel(list, k, &groups, NULL, 0, NULL));
    /* Arguments change after the append: the first launch keeps 2 and x1. */
    set_args(k, 3.0f, b->x2, b);
    CHECK(zeCommandListAppendLaunchKernel(list, k, &groups, NULL, 0, NULL));
    /* Changed again after the last append: must not matter. */
    set_args(k, 1000.0f, b->x1, b);
    /* An open list cannot be executed. */
    EXPECT(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL),
           ZE_RESULT_ERROR_INVALID_ARGUMENT);
    CHECK(zeCommandListClose(list));
    CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
    CHECK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    CHECK(zeCommandListDestroy(list));
    CHECK(zeCommandQueueDestroy(queue));
}

static ze_module_handle_t native_roundtrip(const ze_env_t *env, ze_module_handle_t module) {
    size_t size = 0;
    CHECK(zeModuleGetNativeBinary(module, &size, NULL));
    REQUIRE(size > 0);
    uint8_t *native = malloc(size);
    CHECK(zeModuleGetNativeBinary(module, &size, native));
    ze_module_handle_t copy = load_module(env, native, size, ZE_MODULE_FORMAT_NATIVE);
    free(native);
    printf("native_size=%zu\n", size);
    return copy;
}

int main(int argc, char **argv) {
    REQUIRE(argc == 3);
    ze_env_t env = ze_setup();
    size_t size;
    uint8_t *spirv = read_file(argv[1], &size);
    ze_module_handle_t module = load_module(&env, spirv, size, ZE_MODULE_FORMAT_IL_SPIRV);
    free(spirv);
    if (strcmp(argv[2], "native") == 0) {
        ze_module_handle_t copy = native_roundtrip(&env, module);
        CHECK(zeModuleDestroy(module));
        module = copy;
    }
    ze_kernel_handle_t kernel = make_kernel(module);
    buffers_t b = make_buffers(&env);
    print_array("x1", b.x1);
    print_array("x2", b.x2);
    for (int g = 0; g < G; ++g) print_array("y_before", b.members[g]);
    if (strcmp(argv[2], "regular") == 0) {
        run_regular(&env, kernel, &b);
    } else {
        run_immediate(&env, kernel, &b);
    }
    check_argument_errors(kernel);
    for (int g = 0; g < G; ++g) print_array("y_after", b.members[g]);
    CHECK(zeKernelDestroy(kernel));
    CHECK(zeModuleDestroy(module));
    for (int g = 0; g < G; ++g) CHECK(zeMemFree(env.context, b.members[g]));
    CHECK(zeMemFree(env.context, b.x1));
    CHECK(zeMemFree(env.context, b.x2));
    CHECK(zeMemFree(env.context, b.member_ptrs));
    CHECK(zeMemFree(env.context, b.shapes));
    CHECK(zeContextDestroy(env.context));
    printf("ok\n");
    return 0;
}
