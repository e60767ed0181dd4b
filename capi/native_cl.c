/* Functions of libtinytc_cl written in C (capi/api/library.toml, `native`). */
#include "tinytc/tinytc_cl.h"

void tinytc_cl_get_global_size(const size_t *num_groups, const size_t *local_size,
                               size_t *global_size) {
    int i;
    if (!num_groups || !local_size || !global_size) {
        return;
    }
    for (i = 0; i < 3; ++i) {
        global_size[i] = num_groups[i] * local_size[i];
    }
}
