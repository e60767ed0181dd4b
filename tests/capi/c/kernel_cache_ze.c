/* The kernel cache through the Level Zero C API: parse, compile to a binary, build a module from
 * it (tinytc_ze_kernel_bundle_create_with_binary) on the program's own context, run the kernel
 * (B = 3 A on shared USM) and check the result. With the argument "off" the compiler context's
 * tinytc_optflag_kernel_cache flag is cleared first. Prints "ok"; the test reads the cache
 * folder and its statistics. */
#include "ze_check.h"

#include <tinytc/tinytc_ze.h>

#include <stdint.h>
#include <string.h>

static const char source[] = "func @triple(%A: memref<i32x32>, %B: memref<i32x32>) {\n"
                             "    %three = constant 3 : i32\n"
                             "    %zero = constant 0 : i32\n"
                             "    axpby.n %three, %A, %zero, %B\n"
                             "}\n";

int main(int argc, char **argv) {
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    ze_context_handle_t context;
    if (open_first_ze_device(&driver, &device, &context)) {
        return 1;
    }
    ze_command_queue_desc_t qdesc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0,
                                     ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
                                     ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list;
    EXPECT(zeCommandListCreateImmediate(context, device, &qdesc, &list) == ZE_RESULT_SUCCESS);

    tinytc_compiler_context_t ctx;
    OK(tinytc_compiler_context_create(&ctx));
    if (argc > 1 && strcmp(argv[1], "off") == 0) {
        OK(tinytc_compiler_context_set_optimization_flag(ctx, tinytc_optflag_kernel_cache, 0));
    }
    tinytc_core_info_t info;
    OK(tinytc_ze_core_info_create(&info, device));
    tinytc_prog_t program;
    OK(tinytc_parse_string(&program, sizeof(source), source, ctx));
    tinytc_binary_t bin;
    OK(tinytc_prog_compile_to_spirv_and_assemble(&bin, program, info));
    ze_module_handle_t module;
    OK(tinytc_ze_kernel_bundle_create_with_binary(&module, context, device, bin));
    ze_kernel_handle_t kernel;
    OK(tinytc_ze_kernel_create(&kernel, module, "triple"));

    ze_device_mem_alloc_desc_t d = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t h = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    int32_t *a = NULL, *b = NULL;
    EXPECT(zeMemAllocShared(context, &d, &h, 32 * sizeof(int32_t), 64, device, (void **)&a) ==
           ZE_RESULT_SUCCESS);
    EXPECT(zeMemAllocShared(context, &d, &h, 32 * sizeof(int32_t), 64, device, (void **)&b) ==
           ZE_RESULT_SUCCESS);
    for (int i = 0; i < 32; ++i) {
        a[i] = i - 5;
        b[i] = 0;
    }
    EXPECT(zeKernelSetArgumentValue(kernel, 0, sizeof a, &a) == ZE_RESULT_SUCCESS);
    EXPECT(zeKernelSetArgumentValue(kernel, 1, sizeof b, &b) == ZE_RESULT_SUCCESS);
    ze_group_count_t groups = {1, 1, 1};
    EXPECT(zeCommandListAppendLaunchKernel(list, kernel, &groups, NULL, 0, NULL) ==
           ZE_RESULT_SUCCESS);
    for (int i = 0; i < 32; ++i) {
        EXPECT(b[i] == 3 * a[i]);
    }

    zeMemFree(context, a);
    zeMemFree(context, b);
    zeKernelDestroy(kernel);
    zeModuleDestroy(module);
    tinytc_binary_release(bin);
    tinytc_prog_release(program);
    tinytc_core_info_release(info);
    tinytc_compiler_context_release(ctx);
    zeCommandListDestroy(list);
    zeContextDestroy(context);
    printf("ok\n");
    return 0;
}
