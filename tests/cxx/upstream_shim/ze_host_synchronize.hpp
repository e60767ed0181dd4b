/** @file
 * @brief zeCommandListHostSynchronize for Level Zero loaders older than API 1.6 (Debian's
 * libze1 1.8.12 has API 1.4), which upstream tinytc's Level Zero test runtime calls.
 *
 * Force-included (g++ -include) only when the installed ze_api.h lacks the function. It appends
 * the signal of a host-visible event to the (immediate) list and waits for that event. The
 * event lives in a context of the first driver: correct for a single driver whose contexts
 * share one device context, as tinytc-py's CPU driver does.
 */
#ifndef TINYTC_SHIM_ZE_HOST_SYNCHRONIZE_HPP
#define TINYTC_SHIM_ZE_HOST_SYNCHRONIZE_HPP

#include <cstdint>
#include <level_zero/ze_api.h>

inline ze_result_t zeCommandListHostSynchronize(ze_command_list_handle_t list,
                                                std::uint64_t timeout) {
    std::uint32_t count = 1;
    ze_driver_handle_t driver = nullptr;
    ze_result_t r = zeDriverGet(&count, &driver);
    if (r != ZE_RESULT_SUCCESS) {
        return r;
    }
    ze_context_desc_t ctx_desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ze_context_handle_t ctx = nullptr;
    if ((r = zeContextCreate(driver, &ctx_desc, &ctx)) != ZE_RESULT_SUCCESS) {
        return r;
    }
    ze_event_pool_desc_t pool_desc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                                      ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ze_event_pool_handle_t pool = nullptr;
    ze_event_handle_t done = nullptr;
    ze_event_desc_t event_desc = {ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                                  ZE_EVENT_SCOPE_FLAG_HOST};
    r = zeEventPoolCreate(ctx, &pool_desc, 0, nullptr, &pool);
    if (r == ZE_RESULT_SUCCESS) {
        r = zeEventCreate(pool, &event_desc, &done);
    }
    if (r == ZE_RESULT_SUCCESS) {
        r = zeCommandListAppendSignalEvent(list, done);
    }
    if (r == ZE_RESULT_SUCCESS) {
        r = zeEventHostSynchronize(done, timeout);
    }
    if (done) {
        zeEventDestroy(done);
    }
    if (pool) {
        zeEventPoolDestroy(pool);
    }
    zeContextDestroy(ctx);
    return r;
}

#endif // TINYTC_SHIM_ZE_HOST_SYNCHRONIZE_HPP
