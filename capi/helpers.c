/* Private helpers of the embedding modules (static, so never exported): a string copy the
 * Python side calls through cffi, the interpreter start-up that capi/build.py wires in
 * (with the flag that says it ran), and the exit and fork hooks of the cache's statistics. */
#include <pthread.h>
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

/* The kernel cache's statistics in a C host (src/tinytc_py/kernel_cache/stats.py): counted in
 * the process and added to the folder's totals once, at exit, instead of a file update under a
 * lock at every lookup. A C host never finalises the interpreter, so Python's atexit never
 * runs: a C atexit hook saves them. A fork of the host would copy the unsaved counts into the
 * child, and both would save them: around a fork() the forking thread takes the GIL and runs
 * Python's own fork protocol (PyOS_BeforeFork: the registered before-fork hooks, among them the
 * save; PyOS_AfterFork_Parent / _Child after it: the child drops the copies), as os.fork()
 * does; it also takes the library's lock (capi/errors.py), so the fork waits for another
 * thread's call, and costs ~0.1 ms when idle (docs/c-api.rst). The child keeps the forking
 * thread's thread state. A fork from a thread that holds the GIL already is Python's own
 * (os.fork, subprocess), which runs that protocol itself or execs at once: the handlers leave
 * it alone. posix_spawn, and system() / popen() of glibc >= 2.29 (clone(CLONE_VFORK)), run no
 * fork handlers and need none (the child execs); glibc <= 2.28 runs them from system() and
 * popen() (fork()), which then pay that cost. Both hooks are installed once, by the library that
 * started the interpreter. */
static __thread int _tinytc_py_fork_took_gil = 0;
static __thread PyGILState_STATE _tinytc_py_fork_gil;

static void _tinytc_py_before_fork(void) {
    _tinytc_py_fork_took_gil = 0;
    if (!Py_IsInitialized() || PyGILState_Check()) {
        return;
    }
    _tinytc_py_fork_gil = PyGILState_Ensure();
    PyOS_BeforeFork();
    _tinytc_py_fork_took_gil = 1;
}

static void _tinytc_py_after_fork_parent(void) {
    if (_tinytc_py_fork_took_gil) {
        _tinytc_py_fork_took_gil = 0;
        PyOS_AfterFork_Parent();
        PyGILState_Release(_tinytc_py_fork_gil);
    }
}

static void _tinytc_py_after_fork_child(void) {
    if (_tinytc_py_fork_took_gil) {
        _tinytc_py_fork_took_gil = 0;
        PyOS_AfterFork_Child();
        /* Not PyGILState_Release: PyOS_AfterFork_Child deleted every other thread state, and
         * when this thread's state was made by the Ensure above (a thread that had not called
         * the library) releasing it would delete the only one left, and the next Ensure (a
         * call, or the exit hook) aborts the child. Keep it, as os.fork() does, and only let
         * the GIL go. */
        (void)PyEval_SaveThread();
    }
}

/* At exit: stats.save_at_exit_end(), this process's counts added to the totals (and later
 * ones at once). */
static void _tinytc_py_save_counts(void) {
    PyGILState_STATE gil;
    PyObject *stats, *done;
    if (!Py_IsInitialized()) {
        return;
    }
    gil = PyGILState_Ensure();
    stats = PyImport_ImportModule("tinytc_py.kernel_cache.stats");
    done = stats ? PyObject_CallMethod(stats, "save_at_exit_end", NULL) : NULL;
    if (!done) {
        PyErr_Clear(); /* nothing to report to at exit; only the totals lose the counts */
    }
    Py_XDECREF(done);
    Py_XDECREF(stats);
    PyGILState_Release(gil);
}

/* Installs both hooks; 0 on success (then counts may wait for the exit), else they are saved
 * at once. */
static int _tinytc_py_save_at_exit(void) {
    if (pthread_atfork(_tinytc_py_before_fork, _tinytc_py_after_fork_parent,
                       _tinytc_py_after_fork_child) != 0) {
        return 1;
    }
    return atexit(_tinytc_py_save_counts) != 0;
}
