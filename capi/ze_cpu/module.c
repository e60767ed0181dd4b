/* Modules, build logs and kernels.
 *
 * zeModuleCreate takes SPIR-V (clCreateProgramWithIL) or a "native binary" of ours
 * (clCreateProgramWithBinary). SPIR-V is checked by spirv.c before OpenCL sees it. Our native
 * binary is a small container written by zeModuleGetNativeBinary: it carries the kernels'
 * parameter kinds next to the OpenCL program binary, since a device binary has no SPIR-V to read
 * them from (layout below, little-endian, every count a u32):
 *
 *   "ZTCB" | version (1) | kernel count | per kernel: name length, name bytes, subgroup size,
 *   parameter count, per parameter: kind, size | u64 binary size | OpenCL program binary
 *
 * Kernels keep their own copy of the parameter kinds and every argument's "set" flag; a launch
 * on a regular command list takes a snapshot of the argument values (clCloneKernel). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ze_cpu.h"

#define NATIVE_MAGIC 0x4243545au /* "ZTCB" */
#define NATIVE_VERSION 1u
#define SPIRV_MAGIC 0x07230203u
#define SPIRV_MAGIC_SWAPPED 0x03022307u

/* ---- build logs ------------------------------------------------------------------------------- */

static ze_module_build_log_handle_t new_build_log(const char *text) {
    ze_cpu_build_log_t *log = calloc(1, sizeof *log);
    if (log == NULL) return NULL;
    log->text = ze_cpu_strdup(text ? text : "");
    if (log->text == NULL) {
        free(log);
        return NULL;
    }
    log->magic = MAGIC_BUILD_LOG;
    return (ze_module_build_log_handle_t)log;
}

ze_result_t ze_cpu_build_log_destroy(ze_module_build_log_handle_t h) {
    ze_cpu_build_log_t *log = (ze_cpu_build_log_t *)h;
    CHECK_HANDLE(log, MAGIC_BUILD_LOG);
    log->magic = MAGIC_DEAD;
    free(log->text);
    free(log);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_build_log_get_string(ze_module_build_log_handle_t h, size_t *size, char *out) {
    ze_cpu_build_log_t *log = (ze_cpu_build_log_t *)h;
    CHECK_HANDLE(log, MAGIC_BUILD_LOG);
    return ze_cpu_copy_string(log->text, size, out);
}

/* The OpenCL build log of the program (empty string if there is none); caller frees. */
static char *program_build_log(cl_program program) {
    size_t size = 0;
    cl_device_id dev = ze_cpu_the_device.id;
    if (clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) != CL_SUCCESS)
        size = 0;
    char *text = calloc(size + 1, 1);
    if (text != NULL && size > 0)
        clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, size, text, NULL);
    return text;
}

/* ---- module creation -------------------------------------------------------------------------- */

/* Build flags without the Level Zero GPU ones (-ze-...), which OpenCL rejects (pitfall 7). */
static char *opencl_options(const char *flags) {
    size_t n = flags ? strlen(flags) : 0;
    char *out = calloc(n + 1, 1);
    if (out == NULL || flags == NULL) return out;
    const char *p = flags;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n') ++p;
        const char *end = p;
        while (*end && *end != ' ' && *end != '\t' && *end != '\n') ++end;
        if (end > p && strncmp(p, "-ze-", 4) != 0) {
            if (*out) strcat(out, " ");
            strncat(out, p, (size_t)(end - p));
        }
        p = end;
    }
    return out;
}

/* SPIR-V words in host byte order (a copy: the input may be unaligned or byte-swapped). */
static ze_result_t spirv_words(const uint8_t *bytes, size_t size, uint32_t **out, char *why,
                               size_t why_size) {
    if (size % 4 != 0 || size < 4) {
        snprintf(why, why_size, "SPIR-V size %zu is not a multiple of 4 bytes", size);
        return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    uint32_t *words = malloc(size);
    if (words == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    memcpy(words, bytes, size);
    if (words[0] == SPIRV_MAGIC_SWAPPED)
        for (size_t i = 0; i < size / 4; ++i) words[i] = __builtin_bswap32(words[i]);
    *out = words;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t program_from_il(ze_cpu_module_t *m, const ze_module_desc_t *desc, char *why,
                                   size_t why_size) {
    uint32_t *words = NULL;
    ze_result_t r = spirv_words(desc->pInputModule, desc->inputSize, &words, why, why_size);
    if (r != ZE_RESULT_SUCCESS) return r;
    r = ze_cpu_spirv_scan(words, desc->inputSize / 4, &m->table, why, why_size);
    if (r == ZE_RESULT_SUCCESS) {
        cl_int err;
        m->program = clCreateProgramWithIL(ze_cpu_the_device.context, words, desc->inputSize, &err);
        r = ze_cpu_result_from_cl(err);
    }
    free(words);
    return r;
}

/* Bounds-checked reader of the native container. */
typedef struct reader {
    const uint8_t *at, *end;
    bool ok;
} reader_t;

static uint64_t read_bytes(reader_t *r, size_t n) {
    uint64_t v = 0;
    if (!r->ok || (size_t)(r->end - r->at) < n) {
        r->ok = false;
        return 0;
    }
    memcpy(&v, r->at, n);
    r->at += n;
    return v;
}
static uint32_t read_u32(reader_t *r) { return (uint32_t)read_bytes(r, 4); }

static const uint8_t *read_span(reader_t *r, uint64_t n) {
    if (!r->ok || (uint64_t)(r->end - r->at) < n) {
        r->ok = false;
        return NULL;
    }
    const uint8_t *p = r->at;
    r->at += n;
    return p;
}

static bool read_kernel(reader_t *r, ze_cpu_kernel_info_t *k) {
    uint32_t len = read_u32(r);
    const uint8_t *name = read_span(r, len);
    if (name == NULL) return false;
    k->name = calloc(len + 1, 1);
    if (k->name == NULL) return false;
    memcpy(k->name, name, len);
    k->subgroup_size = read_u32(r);
    k->num_params = read_u32(r);
    if (!r->ok || k->num_params > (size_t)(r->end - r->at) / 8) return false;
    k->params = calloc(k->num_params ? k->num_params : 1, sizeof *k->params);
    if (k->params == NULL) return false;
    for (uint32_t i = 0; i < k->num_params; ++i) {
        k->params[i].kind = read_u32(r);
        k->params[i].size = read_u32(r);
        if (k->params[i].kind > ARG_LOCAL) return false;
    }
    return r->ok;
}

static ze_result_t program_from_native(ze_cpu_module_t *m, const ze_module_desc_t *desc,
                                       char *why, size_t why_size) {
    reader_t r = {desc->pInputModule, desc->pInputModule + desc->inputSize, true};
    bool ok = read_u32(&r) == NATIVE_MAGIC && read_u32(&r) == NATIVE_VERSION;
    uint32_t count = read_u32(&r);
    ok = ok && r.ok && count <= (size_t)(r.end - r.at) / 8;
    if (ok) m->table.kernels = calloc(count ? count : 1, sizeof *m->table.kernels);
    for (uint32_t i = 0; ok && i < count; ++i) {
        ok = m->table.kernels != NULL && read_kernel(&r, &m->table.kernels[i]);
        m->table.count = i + 1;
    }
    uint64_t size = read_bytes(&r, 8);
    const uint8_t *binary = read_span(&r, size);
    if (!ok || binary == NULL || size == 0) {
        snprintf(why, why_size, "not a native binary of the tinytc CPU driver");
        return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    cl_int err, status;
    size_t length = (size_t)size;
    m->program = clCreateProgramWithBinary(ze_cpu_the_device.context, 1, &ze_cpu_the_device.id,
                                           &length, &binary, &status, &err);
    if (err == CL_INVALID_BINARY) snprintf(why, why_size, "OpenCL rejected the program binary");
    return ze_cpu_result_from_cl(err);
}

static ze_result_t build_program(ze_cpu_module_t *m, const char *flags) {
    char *options = opencl_options(flags);
    if (options == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    cl_int err = clBuildProgram(m->program, 1, &ze_cpu_the_device.id, options, NULL, NULL);
    free(options);
    if (err == CL_INVALID_BUILD_OPTIONS) return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    return ze_cpu_result_from_cl(err);
}

static void free_module(ze_cpu_module_t *m) {
    if (m->program) clReleaseProgram(m->program);
    ze_cpu_kernel_table_free(&m->table);
    free(m->names);
    free(m);
}

static ze_result_t check_module_desc(const ze_module_desc_t *desc) {
    CHECK_POINTER(desc);
    if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV && desc->format != ZE_MODULE_FORMAT_NATIVE)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    CHECK_POINTER(desc->pInputModule);
    if (desc->inputSize == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    /* Specialisation constants would need their sizes from the SPIR-V; not supported yet. */
    if (desc->pConstants != NULL && desc->pConstants->numConstants > 0)
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t create_module(const ze_module_desc_t *desc, ze_cpu_module_t *m, char *why,
                                 size_t why_size) {
    ze_result_t r = desc->format == ZE_MODULE_FORMAT_IL_SPIRV
                        ? program_from_il(m, desc, why, why_size)
                        : program_from_native(m, desc, why, why_size);
    if (r == ZE_RESULT_SUCCESS) r = build_program(m, desc->pBuildFlags);
    if (r != ZE_RESULT_SUCCESS) return r;
    m->names = calloc(m->table.count ? m->table.count : 1, sizeof *m->names);
    if (m->names == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    for (uint32_t i = 0; i < m->table.count; ++i) m->names[i] = m->table.kernels[i].name;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_module_create(ze_context_handle_t ctx, ze_device_handle_t dev,
                                 const ze_module_desc_t *desc, ze_module_handle_t *out,
                                 ze_module_build_log_handle_t *log_out) {
    CHECK_HANDLE((ze_cpu_context_t *)ctx, MAGIC_CONTEXT);
    CHECK_HANDLE((ze_cpu_device_t *)dev, MAGIC_DEVICE);
    CHECK_POINTER(out);
    *out = NULL;
    if (log_out != NULL) *log_out = NULL;
    ze_result_t r = check_module_desc(desc);
    if (r != ZE_RESULT_SUCCESS) return r;
    ze_cpu_module_t *m = calloc(1, sizeof *m);
    if (m == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    char why[256] = "";
    r = create_module(desc, m, why, sizeof why);
    if (log_out != NULL) {
        char *cl_log = m->program ? program_build_log(m->program) : NULL;
        *log_out = new_build_log(why[0] ? why : cl_log);
        free(cl_log);
    }
    if (r != ZE_RESULT_SUCCESS) {
        free_module(m);
        return r;
    }
    m->magic = MAGIC_MODULE;
    *out = (ze_module_handle_t)m;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_module_destroy(ze_module_handle_t h) {
    ze_cpu_module_t *m = (ze_cpu_module_t *)h;
    CHECK_HANDLE(m, MAGIC_MODULE);
    m->magic = MAGIC_DEAD;
    free_module(m);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_module_get_kernel_names(ze_module_handle_t h, uint32_t *count,
                                           const char **names) {
    ze_cpu_module_t *m = (ze_cpu_module_t *)h;
    CHECK_HANDLE(m, MAGIC_MODULE);
    CHECK_POINTER(count);
    if (*count == 0 || names == NULL) {
        *count = m->table.count;
        return ZE_RESULT_SUCCESS;
    }
    uint32_t n = *count < m->table.count ? *count : m->table.count;
    for (uint32_t i = 0; i < n; ++i) names[i] = m->names[i];
    *count = n;
    return ZE_RESULT_SUCCESS;
}

/* ---- native binary ---------------------------------------------------------------------------- */

typedef struct writer {
    uint8_t *at; /* NULL: only count */
    size_t size;
} writer_t;

static void write_bytes(writer_t *w, const void *data, size_t n) {
    if (w->at != NULL) memcpy(w->at + w->size, data, n);
    w->size += n;
}
static void write_u32(writer_t *w, uint32_t v) { write_bytes(w, &v, 4); }

static void write_container(writer_t *w, const ze_cpu_kernel_table_t *t, const uint8_t *binary,
                            uint64_t size) {
    write_u32(w, NATIVE_MAGIC);
    write_u32(w, NATIVE_VERSION);
    write_u32(w, t->count);
    for (uint32_t i = 0; i < t->count; ++i) {
        const ze_cpu_kernel_info_t *k = &t->kernels[i];
        uint32_t len = (uint32_t)strlen(k->name);
        write_u32(w, len);
        write_bytes(w, k->name, len);
        write_u32(w, k->subgroup_size);
        write_u32(w, k->num_params);
        for (uint32_t j = 0; j < k->num_params; ++j) {
            write_u32(w, k->params[j].kind);
            write_u32(w, k->params[j].size);
        }
    }
    write_bytes(w, &size, 8);
    if (binary != NULL) write_bytes(w, binary, (size_t)size);
    else w->size += (size_t)size;
}

ze_result_t ze_cpu_module_get_native_binary(ze_module_handle_t h, size_t *size, uint8_t *out) {
    ze_cpu_module_t *m = (ze_cpu_module_t *)h;
    CHECK_HANDLE(m, MAGIC_MODULE);
    CHECK_POINTER(size);
    size_t bin_size = 0;
    cl_int err = clGetProgramInfo(m->program, CL_PROGRAM_BINARY_SIZES, sizeof bin_size, &bin_size,
                                  NULL);
    if (err != CL_SUCCESS) return ze_cpu_result_from_cl(err);
    writer_t count = {NULL, 0};
    write_container(&count, &m->table, NULL, bin_size);
    if (out == NULL) {
        *size = count.size;
        return ZE_RESULT_SUCCESS;
    }
    if (*size < count.size) return ZE_RESULT_ERROR_INVALID_SIZE;
    uint8_t *binary = malloc(bin_size ? bin_size : 1);
    if (binary == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    err = clGetProgramInfo(m->program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL);
    if (err == CL_SUCCESS) {
        writer_t w = {out, 0};
        write_container(&w, &m->table, binary, bin_size);
        *size = w.size;
    }
    free(binary);
    return ze_cpu_result_from_cl(err);
}

/* ---- kernels ---------------------------------------------------------------------------------- */

static const ze_cpu_kernel_info_t *find_kernel(const ze_cpu_module_t *m, const char *name) {
    for (uint32_t i = 0; i < m->table.count; ++i)
        if (strcmp(m->table.kernels[i].name, name) == 0) return &m->table.kernels[i];
    return NULL;
}

void ze_cpu_kernel_allow_indirect(cl_kernel kernel) {
    /* A group argument is a pointer to pointers the kernel dereferences: allow every kind. */
    static const cl_kernel_exec_info flags[] = {
        CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL,
        CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL,
        CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL,
    };
    cl_bool yes = CL_TRUE;
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; ++i)
        clSetKernelExecInfo(kernel, flags[i], sizeof yes, &yes);
}

static void free_kernel(ze_cpu_kernel_t *k) {
    if (k->kernel) clReleaseKernel(k->kernel);
    free(k->name);
    free(k->params);
    free(k->arg_set);
    free(k);
}

static ze_result_t init_kernel(ze_cpu_kernel_t *k, cl_program program,
                               const ze_cpu_kernel_info_t *info) {
    cl_int err;
    k->kernel = clCreateKernel(program, info->name, &err);
    if (err != CL_SUCCESS) return ze_cpu_result_from_cl(err);
    k->name = ze_cpu_strdup(info->name);
    size_t n = info->num_params ? info->num_params : 1;
    k->params = calloc(n, sizeof *k->params);
    k->arg_set = calloc(n, sizeof *k->arg_set);
    if (k->name == NULL || k->params == NULL || k->arg_set == NULL)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    k->num_params = info->num_params;
    k->subgroup_size = info->subgroup_size;
    memcpy(k->params, info->params, info->num_params * sizeof *k->params);
    size_t required[3] = {0, 0, 0};
    clGetKernelWorkGroupInfo(k->kernel, ze_cpu_the_device.id, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                             sizeof required, required, NULL);
    bool has_required = required[0] != 0;
    for (int d = 0; d < 3; ++d) {
        k->required_size[d] = has_required ? (uint32_t)required[d] : 0;
        k->group_size[d] = has_required ? (uint32_t)required[d] : 1;
    }
    ze_cpu_kernel_allow_indirect(k->kernel);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_kernel_create(ze_module_handle_t h, const ze_kernel_desc_t *desc,
                                 ze_kernel_handle_t *out) {
    ze_cpu_module_t *m = (ze_cpu_module_t *)h;
    CHECK_HANDLE(m, MAGIC_MODULE);
    CHECK_POINTER(desc);
    CHECK_POINTER(desc->pKernelName);
    CHECK_POINTER(out);
    *out = NULL;
    if (desc->flags & ~(ze_kernel_flags_t)(ZE_KERNEL_FLAG_FORCE_RESIDENCY |
                                           ZE_KERNEL_FLAG_EXPLICIT_RESIDENCY))
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    const ze_cpu_kernel_info_t *info = find_kernel(m, desc->pKernelName);
    if (info == NULL) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    ze_cpu_kernel_t *k = calloc(1, sizeof *k);
    if (k == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    ze_result_t r = init_kernel(k, m->program, info);
    if (r != ZE_RESULT_SUCCESS) {
        free_kernel(k);
        return r;
    }
    k->magic = MAGIC_KERNEL;
    *out = (ze_kernel_handle_t)k;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_kernel_destroy(ze_kernel_handle_t h) {
    ze_cpu_kernel_t *k = (ze_cpu_kernel_t *)h;
    CHECK_HANDLE(k, MAGIC_KERNEL);
    k->magic = MAGIC_DEAD;
    free_kernel(k);
    return ZE_RESULT_SUCCESS;
}

/* The most work-items a group of this kernel may have. */
static size_t kernel_max_group(const ze_cpu_kernel_t *k) {
    size_t max = ze_cpu_the_device.max_wg_size;
    size_t kernel_max = 0;
    if (clGetKernelWorkGroupInfo(k->kernel, ze_cpu_the_device.id, CL_KERNEL_WORK_GROUP_SIZE,
                                 sizeof kernel_max, &kernel_max, NULL) == CL_SUCCESS &&
        kernel_max != 0 && kernel_max < max)
        max = kernel_max;
    return max;
}

ze_result_t ze_cpu_kernel_set_group_size(ze_kernel_handle_t h, uint32_t x, uint32_t y,
                                         uint32_t z) {
    ze_cpu_kernel_t *k = (ze_cpu_kernel_t *)h;
    CHECK_HANDLE(k, MAGIC_KERNEL);
    uint32_t size[3] = {x, y, z};
    uint64_t total = (uint64_t)x * y * z;
    if (total == 0 || total > kernel_max_group(k)) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    for (int d = 0; d < 3; ++d) {
        if (size[d] > ze_cpu_the_device.max_wg_sizes[d])
            return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
        if (k->required_size[0] != 0 && size[d] != k->required_size[d])
            return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    }
    memcpy(k->group_size, size, sizeof size);
    return ZE_RESULT_SUCCESS;
}

static uint32_t largest_divisor(uint32_t n, size_t limit) {
    for (uint32_t d = (uint32_t)(limit < n ? limit : n); d > 1; --d)
        if (n % d == 0) return d;
    return 1;
}

ze_result_t ze_cpu_kernel_suggest_group_size(ze_kernel_handle_t h, uint32_t gx, uint32_t gy,
                                             uint32_t gz, uint32_t *x, uint32_t *y, uint32_t *z) {
    ze_cpu_kernel_t *k = (ze_cpu_kernel_t *)h;
    CHECK_HANDLE(k, MAGIC_KERNEL);
    CHECK_POINTER(x);
    CHECK_POINTER(y);
    CHECK_POINTER(z);
    if (gx == 0 || gy == 0 || gz == 0) return ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION;
    uint32_t *out[3] = {x, y, z};
    uint32_t global[3] = {gx, gy, gz};
    size_t remaining = kernel_max_group(k);
    for (int d = 0; d < 3; ++d) {
        if (k->required_size[0] != 0) {
            *out[d] = k->required_size[d];
            continue;
        }
        size_t limit = remaining < ze_cpu_the_device.max_wg_sizes[d]
                           ? remaining
                           : ze_cpu_the_device.max_wg_sizes[d];
        *out[d] = largest_divisor(global[d], limit);
        remaining /= *out[d];
    }
    return ZE_RESULT_SUCCESS;
}

static ze_result_t set_argument(ze_cpu_kernel_t *k, uint32_t index, size_t size,
                                const void *value) {
    const ze_cpu_param_t *p = &k->params[index];
    switch (p->kind) {
    case ARG_POINTER:
        if (size != sizeof(void *)) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
        /* A NULL value means a null pointer argument. */
        return ze_cpu_result_from_cl(ze_cpu_the_device.usm.set_arg_pointer(
            k->kernel, index, value ? *(void *const *)value : NULL));
    case ARG_LOCAL:
        if (size == 0) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
        return ze_cpu_result_from_cl(clSetKernelArg(k->kernel, index, size, NULL));
    default:
        if (p->size != 0 && size != p->size) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
        CHECK_POINTER(value);
        return ze_cpu_result_from_cl(clSetKernelArg(k->kernel, index, size, value));
    }
}

ze_result_t ze_cpu_kernel_set_argument_value(ze_kernel_handle_t h, uint32_t index, size_t size,
                                             const void *value) {
    ze_cpu_kernel_t *k = (ze_cpu_kernel_t *)h;
    CHECK_HANDLE(k, MAGIC_KERNEL);
    if (index >= k->num_params) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    ze_result_t r = set_argument(k, index, size, value);
    if (r == ZE_RESULT_SUCCESS) k->arg_set[index] = true;
    return r;
}

ze_result_t ze_cpu_kernel_set_indirect_access(ze_kernel_handle_t h,
                                              ze_kernel_indirect_access_flags_t flags) {
    CHECK_HANDLE((ze_cpu_kernel_t *)h, MAGIC_KERNEL);
    const ze_kernel_indirect_access_flags_t known = ZE_KERNEL_INDIRECT_ACCESS_FLAG_HOST |
                                                    ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE |
                                                    ZE_KERNEL_INDIRECT_ACCESS_FLAG_SHARED;
    if (flags & ~known) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    return ZE_RESULT_SUCCESS; /* indirect access is always allowed (see allow_indirect) */
}

ze_result_t ze_cpu_kernel_ready(const ze_cpu_kernel_t *k) {
    for (uint32_t i = 0; i < k->num_params; ++i)
        if (!k->arg_set[i]) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_kernel_snapshot(ze_cpu_kernel_t *k, cl_kernel *out) {
    cl_int err;
    *out = clCloneKernel(k->kernel, &err);
    if (err != CL_SUCCESS) return ze_cpu_result_from_cl(err);
    ze_cpu_kernel_allow_indirect(*out);
    return ZE_RESULT_SUCCESS;
}

static size_t kernel_size_info(const ze_cpu_kernel_t *k, cl_kernel_work_group_info what) {
    size_t v = 0;
    clGetKernelWorkGroupInfo(k->kernel, ze_cpu_the_device.id, what, sizeof v, &v, NULL);
    return v;
}

static cl_ulong kernel_ulong_info(const ze_cpu_kernel_t *k, cl_kernel_work_group_info what) {
    cl_ulong v = 0;
    clGetKernelWorkGroupInfo(k->kernel, ze_cpu_the_device.id, what, sizeof v, &v, NULL);
    return v;
}

static size_t subgroup_info(const ze_cpu_kernel_t *k, cl_kernel_sub_group_info what) {
    size_t local[3] = {k->group_size[0], k->group_size[1], k->group_size[2]};
    size_t v = 0;
    clGetKernelSubGroupInfo(k->kernel, ze_cpu_the_device.id, what, sizeof local, local, sizeof v,
                            &v, NULL);
    return v;
}

static void fill_preferred_size(const ze_cpu_kernel_t *k, void *chain) {
    for (ze_base_properties_t *p = chain; p != NULL; p = p->pNext) {
        if (p->stype != ZE_STRUCTURE_TYPE_KERNEL_PREFERRED_GROUP_SIZE_PROPERTIES) continue;
        ((ze_kernel_preferred_group_size_properties_t *)p)->preferredMultiple =
            (uint32_t)kernel_size_info(k, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE);
    }
}

ze_result_t ze_cpu_kernel_get_properties(ze_kernel_handle_t h, ze_kernel_properties_t *props) {
    ze_cpu_kernel_t *k = (ze_cpu_kernel_t *)h;
    CHECK_HANDLE(k, MAGIC_KERNEL);
    CHECK_POINTER(props);
    props->numKernelArgs = k->num_params;
    props->requiredGroupSizeX = k->required_size[0];
    props->requiredGroupSizeY = k->required_size[1];
    props->requiredGroupSizeZ = k->required_size[2];
    props->requiredNumSubGroups = 0;
    props->requiredSubgroupSize =
        (uint32_t)kernel_size_info(k, CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL);
    if (props->requiredSubgroupSize == 0) props->requiredSubgroupSize = k->subgroup_size;
    props->maxSubgroupSize = props->requiredSubgroupSize
                                 ? props->requiredSubgroupSize
                                 : (uint32_t)subgroup_info(k, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE);
    props->maxNumSubgroups = (uint32_t)subgroup_info(k, CL_KERNEL_MAX_NUM_SUB_GROUPS);
    props->localMemSize = (uint32_t)kernel_ulong_info(k, CL_KERNEL_LOCAL_MEM_SIZE);
    props->privateMemSize = (uint32_t)kernel_ulong_info(k, CL_KERNEL_PRIVATE_MEM_SIZE);
    props->spillMemSize = 0;
    memset(&props->uuid, 0, sizeof props->uuid);
    fill_preferred_size(k, props->pNext);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_kernel_get_name(ze_kernel_handle_t h, size_t *size, char *name) {
    ze_cpu_kernel_t *k = (ze_cpu_kernel_t *)h;
    CHECK_HANDLE(k, MAGIC_KERNEL);
    return ze_cpu_copy_string(k->name, size, name);
}
