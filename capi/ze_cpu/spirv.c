/* A small SPIR-V reader with two jobs.
 *
 * 1. Structure check before OpenCL sees a binary: the Intel CPU runtime loops forever on an
 *    instruction with word count 0 (pitfall 3) and crashes on a block without a terminator (a
 *    truncated module), so the header, every instruction's word count and the nesting of
 *    functions and blocks are checked here, and literal strings we read must end inside their
 *    instruction.
 * 2. Kernel parameter kinds: Level Zero sets every argument as bytes, OpenCL needs to know USM
 *    pointers (pitfall 5). For each OpEntryPoint with the Kernel execution model, the types of
 *    its OpFunctionParameters give the kind: a CrossWorkgroup/Generic/UniformConstant pointer is
 *    a USM pointer, a Workgroup pointer is local memory (only a size), anything else is passed by
 *    value and has a known byte size for scalars, vectors and structs of them.
 *
 * Types are few in a kernel module, so they live in a flat array searched linearly; this keeps
 * memory proportional to the module, whatever id bound the header claims. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ze_cpu.h"

#define SPIRV_MAGIC 0x07230203u
#define HEADER_WORDS 5

enum {
    OP_ENTRY_POINT = 15,
    OP_EXECUTION_MODE = 16,
    OP_TYPE_BOOL = 20,
    OP_TYPE_INT = 21,
    OP_TYPE_FLOAT = 22,
    OP_TYPE_VECTOR = 23,
    OP_TYPE_ARRAY = 28,
    OP_TYPE_STRUCT = 30,
    OP_TYPE_POINTER = 32,
    OP_CONSTANT = 43,
    OP_FUNCTION = 54,
    OP_FUNCTION_PARAMETER = 55,
    OP_FUNCTION_END = 56,
    OP_LABEL = 248,
    OP_BRANCH = 249,        /* 249..255: the block terminators */
    OP_UNREACHABLE = 255,
    OP_TERMINATE_INVOCATION = 4416,
};

enum {
    SC_UNIFORM_CONSTANT = 0,
    SC_WORKGROUP = 4,
    SC_CROSS_WORKGROUP = 5,
    SC_GENERIC = 8,
    SC_DEVICE_ONLY_INTEL = 5936,
    SC_HOST_ONLY_INTEL = 5937,
};

#define EXECUTION_MODEL_KERNEL 6
#define EXECUTION_MODE_SUBGROUP_SIZE 35

typedef struct type_info {
    uint32_t id;
    uint32_t kind;  /* ze_cpu_arg_kind_t */
    uint32_t size;  /* bytes by value; 0 unknown */
    uint32_t align; /* bytes; for struct layout */
} type_info_t;

typedef struct constant_info {
    uint32_t id;
    uint32_t value; /* low word: enough for array lengths */
} constant_info_t;

typedef struct function_info {
    uint32_t id;
    uint32_t num_params;
    size_t capacity;
    ze_cpu_param_t *params;
} function_info_t;

typedef struct entry_info {
    uint32_t function;
    char *name;
    uint32_t subgroup_size;
} entry_info_t;

/* Growable arrays of the records above. */
typedef struct scan_state {
    type_info_t *types;
    size_t num_types, cap_types;
    constant_info_t *constants;
    size_t num_constants, cap_constants;
    function_info_t *functions;
    size_t num_functions, cap_functions;
    entry_info_t *entries;
    size_t num_entries, cap_entries;
    function_info_t *current; /* function whose parameters come next */
    bool in_function, in_block;
} scan_state_t;

static bool grow(void **array, size_t *capacity, size_t count, size_t elem) {
    if (count < *capacity) return true;
    size_t cap = *capacity ? 2 * *capacity : 16;
    void *p = realloc(*array, cap * elem);
    if (p == NULL) return false;
    *array = p;
    *capacity = cap;
    return true;
}

#define PUSH(state, field, value)                                                                  \
    (grow((void **)&(state)->field, &(state)->cap_##field, (state)->num_##field,                  \
          sizeof *(state)->field)                                                                  \
         ? ((state)->field[(state)->num_##field++] = (value), true)                               \
         : false)

static const type_info_t *find_type(const scan_state_t *s, uint32_t id) {
    for (size_t i = 0; i < s->num_types; ++i)
        if (s->types[i].id == id) return &s->types[i];
    return NULL;
}

static const constant_info_t *find_constant(const scan_state_t *s, uint32_t id) {
    for (size_t i = 0; i < s->num_constants; ++i)
        if (s->constants[i].id == id) return &s->constants[i];
    return NULL;
}

static uint32_t size_of(const scan_state_t *s, uint32_t id) {
    const type_info_t *t = find_type(s, id);
    return t ? t->size : 0;
}

static uint32_t align_up(uint32_t value, uint32_t align) {
    return align ? (value + align - 1) / align * align : value;
}

static type_info_t pointer_type(uint32_t id, uint32_t storage) {
    type_info_t t = {id, ARG_VALUE, 8, 8};
    switch (storage) {
    case SC_WORKGROUP: t.kind = ARG_LOCAL; break;
    case SC_CROSS_WORKGROUP:
    case SC_GENERIC:
    case SC_UNIFORM_CONSTANT:
    case SC_DEVICE_ONLY_INTEL:
    case SC_HOST_ONLY_INTEL: t.kind = ARG_POINTER; break;
    default: break;
    }
    return t;
}

/* By-value layout as OpenCL C lays it out: 3-element vectors take the room of 4, a struct member
 * sits at a multiple of its alignment. */
static type_info_t vector_type(const scan_state_t *s, uint32_t id, uint32_t comp, uint32_t n) {
    uint32_t elem = size_of(s, comp);
    uint32_t size = elem * (n == 3 ? 4 : n);
    return (type_info_t){id, ARG_VALUE, size, size};
}

static type_info_t struct_type(const scan_state_t *s, uint32_t id, const uint32_t *members,
                               uint32_t n) {
    uint32_t offset = 0, align = 1;
    for (uint32_t i = 0; i < n; ++i) {
        const type_info_t *m = find_type(s, members[i]);
        if (m == NULL || m->size == 0) return (type_info_t){id, ARG_VALUE, 0, 1};
        offset = align_up(offset, m->align) + m->size;
        if (m->align > align) align = m->align;
    }
    return (type_info_t){id, ARG_VALUE, align_up(offset, align), align};
}

static type_info_t array_type(const scan_state_t *s, uint32_t id, uint32_t elem, uint32_t len) {
    const type_info_t *e = find_type(s, elem);
    const constant_info_t *c = find_constant(s, len);
    if (e == NULL || c == NULL) return (type_info_t){id, ARG_VALUE, 0, 1};
    return (type_info_t){id, ARG_VALUE, e->size * c->value, e->align};
}

/* A literal string starting at words[0], ending within n words; NULL if unterminated. */
static const char *literal_string(const uint32_t *words, uint32_t n) {
    const char *text = (const char *)words;
    return memchr(text, '\0', (size_t)n * 4) ? text : NULL;
}

static bool add_entry(scan_state_t *s, const uint32_t *ops, uint32_t n) {
    if (n < 3 || ops[0] != EXECUTION_MODEL_KERNEL) return true;
    const char *name = literal_string(ops + 2, n - 2);
    if (name == NULL) return false;
    entry_info_t e = {ops[1], ze_cpu_strdup(name), 0};
    return e.name != NULL && PUSH(s, entries, e);
}

/* OpenCL's runtime may not report a required subgroup size; the module states it. */
static bool add_execution_mode(scan_state_t *s, const uint32_t *ops, uint32_t n) {
    if (n < 3 || ops[1] != EXECUTION_MODE_SUBGROUP_SIZE) return true;
    for (size_t i = 0; i < s->num_entries; ++i)
        if (s->entries[i].function == ops[0]) s->entries[i].subgroup_size = ops[2];
    return true;
}

static bool add_function(scan_state_t *s, uint32_t id) {
    function_info_t f = {id, 0, 0, NULL};
    if (!PUSH(s, functions, f)) return false;
    s->current = &s->functions[s->num_functions - 1];
    return true;
}

static bool add_parameter(scan_state_t *s, uint32_t type_id) {
    function_info_t *f = s->current;
    if (f == NULL) return false;
    if (!grow((void **)&f->params, &f->capacity, f->num_params, sizeof *f->params)) return false;
    const type_info_t *t = find_type(s, type_id);
    ze_cpu_param_t p = {t ? t->kind : ARG_VALUE, t ? t->size : 0};
    f->params[f->num_params++] = p;
    return true;
}

/* Functions and blocks nest properly: OpFunction ... (OpLabel ... terminator)* OpFunctionEnd. */
static const char *check_nesting(scan_state_t *s, uint32_t opcode) {
    bool terminator = (opcode >= OP_BRANCH && opcode <= OP_UNREACHABLE) ||
                      opcode == OP_TERMINATE_INVOCATION;
    if (opcode == OP_FUNCTION) {
        if (s->in_function) return "OpFunction inside a function";
        s->in_function = true;
    } else if (opcode == OP_LABEL) {
        if (!s->in_function || s->in_block) return "OpLabel outside a function or in a block";
        s->in_block = true;
    } else if (terminator) {
        if (!s->in_block) return "block terminator outside a block";
        s->in_block = false;
    } else if (opcode == OP_FUNCTION_END) {
        if (!s->in_function || s->in_block) return "function ends inside a block";
        s->in_function = false;
    }
    return NULL;
}

/* One instruction; false on a malformed operand list or out of memory. */
static bool visit(scan_state_t *s, uint32_t opcode, const uint32_t *ops, uint32_t n) {
    switch (opcode) {
    case OP_ENTRY_POINT: return add_entry(s, ops, n);
    case OP_EXECUTION_MODE: return add_execution_mode(s, ops, n);
    case OP_TYPE_BOOL: return n >= 1 && PUSH(s, types, ((type_info_t){ops[0], ARG_VALUE, 1, 1}));
    case OP_TYPE_INT:
    case OP_TYPE_FLOAT:
        return n >= 2 && PUSH(s, types, ((type_info_t){ops[0], ARG_VALUE, ops[1] / 8, ops[1] / 8}));
    case OP_TYPE_VECTOR: return n >= 3 && PUSH(s, types, vector_type(s, ops[0], ops[1], ops[2]));
    case OP_TYPE_ARRAY: return n >= 3 && PUSH(s, types, array_type(s, ops[0], ops[1], ops[2]));
    case OP_TYPE_STRUCT: return n >= 1 && PUSH(s, types, struct_type(s, ops[0], ops + 1, n - 1));
    case OP_TYPE_POINTER: return n >= 3 && PUSH(s, types, pointer_type(ops[0], ops[1]));
    case OP_CONSTANT:
        return n >= 3 && PUSH(s, constants, ((constant_info_t){ops[1], ops[2]}));
    case OP_FUNCTION: return n >= 4 && add_function(s, ops[1]);
    case OP_FUNCTION_PARAMETER: return n >= 2 && add_parameter(s, ops[0]);
    default: return true;
    }
}

static void free_state(scan_state_t *s) {
    for (size_t i = 0; i < s->num_functions; ++i) free(s->functions[i].params);
    for (size_t i = 0; i < s->num_entries; ++i) free(s->entries[i].name);
    free(s->types);
    free(s->constants);
    free(s->functions);
    free(s->entries);
}

static const function_info_t *find_function(const scan_state_t *s, uint32_t id) {
    for (size_t i = 0; i < s->num_functions; ++i)
        if (s->functions[i].id == id) return &s->functions[i];
    return NULL;
}

/* Moves the entry points' parameter lists into the kernel table. */
static bool build_table(scan_state_t *s, ze_cpu_kernel_table_t *table) {
    table->kernels = calloc(s->num_entries ? s->num_entries : 1, sizeof *table->kernels);
    if (table->kernels == NULL) return false;
    for (size_t i = 0; i < s->num_entries; ++i) {
        const function_info_t *f = find_function(s, s->entries[i].function);
        ze_cpu_kernel_info_t *k = &table->kernels[table->count++];
        k->name = s->entries[i].name;
        k->subgroup_size = s->entries[i].subgroup_size;
        s->entries[i].name = NULL;
        k->num_params = f ? f->num_params : 0;
        k->params = calloc(k->num_params ? k->num_params : 1, sizeof *k->params);
        if (k->params == NULL) return false;
        if (k->num_params) memcpy(k->params, f->params, k->num_params * sizeof *k->params);
    }
    return true;
}

ze_result_t ze_cpu_spirv_scan(const uint32_t *words, size_t num_words,
                              ze_cpu_kernel_table_t *table, char *why, size_t why_size) {
    memset(table, 0, sizeof *table);
    if (num_words < HEADER_WORDS || words[0] != SPIRV_MAGIC) {
        snprintf(why, why_size, "not a SPIR-V module (bad magic number or too short)");
        return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    scan_state_t s = {0};
    ze_result_t result = ZE_RESULT_SUCCESS;
    size_t at = HEADER_WORDS;
    while (at < num_words && result == ZE_RESULT_SUCCESS) {
        uint32_t count = words[at] >> 16, opcode = words[at] & 0xffffu;
        const char *bad_nesting = NULL;
        if (count == 0 || count > num_words - at) {
            snprintf(why, why_size, "malformed SPIR-V: instruction at word %zu has word count %u",
                     at, count);
            result = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
        } else if ((bad_nesting = check_nesting(&s, opcode)) != NULL) {
            snprintf(why, why_size, "malformed SPIR-V: %s (word %zu)", bad_nesting, at);
            result = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
        } else if (!visit(&s, opcode, words + at + 1, count - 1)) {
            snprintf(why, why_size, "malformed SPIR-V: bad operands of opcode %u at word %zu",
                     opcode, at);
            result = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
        }
        at += count ? count : 1;
    }
    if (result == ZE_RESULT_SUCCESS && s.in_function) {
        snprintf(why, why_size, "malformed SPIR-V: the module ends inside a function");
        result = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    }
    if (result == ZE_RESULT_SUCCESS && !build_table(&s, table)) {
        snprintf(why, why_size, "out of host memory");
        result = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    if (result != ZE_RESULT_SUCCESS) ze_cpu_kernel_table_free(table);
    free_state(&s);
    return result;
}

void ze_cpu_kernel_table_free(ze_cpu_kernel_table_t *table) {
    for (uint32_t i = 0; i < table->count; ++i) {
        free(table->kernels[i].name);
        free(table->kernels[i].params);
    }
    free(table->kernels);
    memset(table, 0, sizeof *table);
}
