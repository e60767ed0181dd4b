/* module_errors <file> <format: il|native>: creates a module from the file and prints the
 * result ("result=0x...") and the build log ("log=..."), for the error-path tests. */
#include "ze_common.h"

int main(int argc, char **argv) {
    REQUIRE(argc == 3);
    ze_env_t env = ze_setup();
    size_t size;
    uint8_t *data = read_file(argv[1], &size);
    ze_module_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                             .format = strcmp(argv[2], "native") == 0 ? ZE_MODULE_FORMAT_NATIVE
                                                                      : ZE_MODULE_FORMAT_IL_SPIRV,
                             .inputSize = size,
                             .pInputModule = data};
    ze_module_handle_t module = NULL;
    ze_module_build_log_handle_t log = NULL;
    ze_result_t r = zeModuleCreate(env.context, env.device, &desc, &module, &log);
    printf("result=0x%x\n", (unsigned)r);
    REQUIRE(log != NULL);
    size_t log_size = 0;
    CHECK(zeModuleBuildLogGetString(log, &log_size, NULL));
    char *text = malloc(log_size);
    CHECK(zeModuleBuildLogGetString(log, &log_size, text));
    REQUIRE(strlen(text) + 1 == log_size);
    printf("log=%s\n", text);
    free(text);
    CHECK(zeModuleBuildLogDestroy(log));
    if (module != NULL) CHECK(zeModuleDestroy(module));
    free(data);
    CHECK(zeContextDestroy(env.context));
    printf("ok\n");
    return 0;
}
