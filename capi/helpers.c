/* Private helpers of the embedding modules (static, so never exported): a string copy the
 * Python side calls through cffi, and the interpreter start-up that capi/build.py wires in
 * (with the flag that says it ran). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A malloc'ed, NUL-terminated copy of n bytes (freed by tinytc_string_destroy). */
static char *_tinytc_py_strndup(const char *s, size_t n) {
    char *copy = (char *)malloc(n + 1);
    if (copy) {
        memcpy(copy, s, n);
        copy[n] = '\0';
    }
    return copy;
}

/* Starts the embedded interpreter as the Python that built the library would start:
 * TINYTC_PY_EXE is that interpreter (a virtual environment's python finds its pyvenv.cfg and so
 * its site-packages), TINYTC_PY_PATH goes in front of sys.path (this checkout's src/). The host's
 * PYTHON* variables are ignored and no signal handlers are installed (the host owns those).
 * capi/build.py defines both macros and makes cffi call this instead of Py_InitializeEx(0). */
static int _tinytc_py_started = 0;

/* Whether this library started the interpreter (a C host), not found one running (a Python
 * process that loaded the library): only then may the library's start-up tune the collector. */
static int _tinytc_py_started_python(void) { return _tinytc_py_started; }

static void _tinytc_py_initialize(void) {
    PyStatus status;
    PyConfig config;
    _tinytc_py_started = 1;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;
    config.parse_argv = 0;
    config.use_environment = 0;
    config.user_site_directory = 0;
    status = PyConfig_SetBytesString(&config, &config.program_name, TINYTC_PY_EXE);
    if (!PyStatus_Exception(status)) {
        status = PyConfig_SetBytesString(&config, &config.pythonpath_env, TINYTC_PY_PATH);
    }
    if (!PyStatus_Exception(status)) {
        status = Py_InitializeFromConfig(&config);
    }
    PyConfig_Clear(&config);
    if (!Py_IsInitialized()) {
        fprintf(stderr, "libtinytc: configured Python start failed (%s); trying the default\n",
                status.err_msg ? status.err_msg : "unknown error");
        Py_InitializeEx(0);
    }
}

/* What an exported function returns when Python cannot be started at all: functions with a
 * status report tinytc_status_runtime_error (cffi alone would return 0, i.e. success). */
static void _tinytc_py_unavailable(const char *name, char *result, int size) {
    static int told = 0;
    if (!told) {
        told = 1;
        fprintf(stderr, "libtinytc: the embedded Python failed to start; %s() and every other "
                        "call fails with tinytc_status_runtime_error\n", name);
    }
    memset(result, 0, (size_t)size);
    if (size == (int)sizeof(int)) {
        int status = 4; /* tinytc_status_runtime_error */
        memcpy(result, &status, sizeof status);
    }
}
