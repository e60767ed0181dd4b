/* Functions of libtinytc_cl written in C (capi/api/library.toml, `native`), and the registration
 * of the Intel CPU OpenCL runtime with the ICD loader.
 *
 * Why the registration: on a machine without a GPU the only OpenCL runtime is Intel's CPU
 * runtime from PyPI (intel-opencl-rt), whose own .icd file points to a path of its build
 * machine, so the loader (ocl-icd, the Khronos loader) finds no platform and a host program's
 * clGetPlatformIDs fails. capi/ze_cpu/build.py writes a vendors folder next to the libraries
 * with an .icd file naming the environment's libintelocl.so, and build.py passes its path as
 * TINYTC_CL_VENDORS. The loader reads OCL_ICD_VENDORS once, at the process's first
 * clGetPlatformIDs, and a host calls that before any tinytc function, so the variable is set
 * by a constructor, which runs when the library is loaded, before main. Only when the user
 * configured nothing: OCL_ICD_VENDORS, OCL_ICD_FILENAMES and OPENCL_VENDOR_PATH unset and no
 * .icd file in the system's vendors folder (a machine with an OpenCL driver keeps exactly its
 * own platforms). */
#include "tinytc/tinytc_cl.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

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

#ifdef TINYTC_CL_VENDORS
static int has_icd_file(const char *folder) {
    DIR *dir = opendir(folder);
    struct dirent *entry;
    int found = 0;
    if (!dir) {
        return 0;
    }
    while (!found && (entry = readdir(dir)) != NULL) {
        size_t n = strlen(entry->d_name);
        found = n > 4 && strcmp(entry->d_name + n - 4, ".icd") == 0;
    }
    closedir(dir);
    return found;
}

__attribute__((constructor)) static void tinytc_cl_register_cpu_runtime(void) {
    if (getenv("OCL_ICD_VENDORS") || getenv("OCL_ICD_FILENAMES") || getenv("OPENCL_VENDOR_PATH") ||
        has_icd_file("/etc/OpenCL/vendors")) {
        return;
    }
    setenv("OCL_ICD_VENDORS", TINYTC_CL_VENDORS, 0);
}
#endif
