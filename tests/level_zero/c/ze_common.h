/* Helpers shared by the Level Zero test programs: checked calls and setup of driver, device and
 * context through the real loader (libze_loader). Every failed check prints what failed and
 * exits with status 1, so the pytest side sees the message in stderr. */
#ifndef ZE_COMMON_H
#define ZE_COMMON_H

#include <level_zero/ze_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call) expect_result((call), ZE_RESULT_SUCCESS, #call, __LINE__)
#define EXPECT(call, want) expect_result((call), (want), #call, __LINE__)
#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "line %d: requirement failed: %s\n", __LINE__, #cond);                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static inline void expect_result(ze_result_t got, ze_result_t want, const char *what, int line) {
    if (got == want) return;
    fprintf(stderr, "line %d: %s returned 0x%x, expected 0x%x\n", line, what, (unsigned)got,
            (unsigned)want);
    exit(1);
}

typedef struct ze_env {
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    ze_context_handle_t context;
} ze_env_t;

static inline ze_env_t ze_setup(void) {
    ze_env_t env;
    CHECK(zeInit(0));
    CHECK(zeInit(0)); /* idempotent */
    uint32_t n = 0;
    CHECK(zeDriverGet(&n, NULL));
    REQUIRE(n == 1);
    CHECK(zeDriverGet(&n, &env.driver));
    n = 0;
    CHECK(zeDeviceGet(env.driver, &n, NULL));
    REQUIRE(n == 1);
    CHECK(zeDeviceGet(env.driver, &n, &env.device));
    ze_context_desc_t desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    CHECK(zeContextCreate(env.driver, &desc, &env.context));
    return env;
}

static inline ze_command_list_handle_t ze_immediate_list(const ze_env_t *env,
                                                         ze_command_queue_mode_t mode) {
    ze_command_queue_desc_t desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0, mode,
                                    ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list;
    CHECK(zeCommandListCreateImmediate(env->context, env->device, &desc, &list));
    return list;
}

static inline void *ze_shared(const ze_env_t *env, size_t size) {
    ze_device_mem_alloc_desc_t d = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t h = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    void *ptr = NULL;
    CHECK(zeMemAllocShared(env->context, &d, &h, size, 0, env->device, &ptr));
    return ptr;
}

/* Reads a whole file; exits on failure. */
static inline uint8_t *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(n > 0 ? (size_t)n : 1);
    REQUIRE(data != NULL && fread(data, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

#endif
