/* The Level Zero counterpart of cl_check.h for the C test programs that call Level Zero
 * themselves. */
#ifndef TINYTC_TEST_ZE_CHECK_H
#define TINYTC_TEST_ZE_CHECK_H

#include "check.h"

#include <level_zero/ze_api.h>

#include <stdint.h>

/* The one driver and its one device (tinytc-py's CPU driver in the tests) and a context on
 * them; returns 0, or 1 after printing the failing call. */
static inline int open_first_ze_device(ze_driver_handle_t *driver, ze_device_handle_t *device,
                                       ze_context_handle_t *context) {
    uint32_t count = 1;
    EXPECT(zeInit(0) == ZE_RESULT_SUCCESS);
    EXPECT(zeDriverGet(&count, driver) == ZE_RESULT_SUCCESS && count == 1);
    EXPECT(zeDeviceGet(*driver, &count, device) == ZE_RESULT_SUCCESS && count == 1);
    ze_context_desc_t cdesc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    EXPECT(zeContextCreate(*driver, &cdesc, context) == ZE_RESULT_SUCCESS);
    return 0;
}

#endif
