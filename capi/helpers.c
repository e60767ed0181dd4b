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

/* A C host's kernel-cache entries written behind, without Python (kernel_cache/writer.py,
 * `native_in_host`): a miss hands the entry's bytes to one native thread, which writes them to a
 * temporary file and renames it into place while the host goes on, so the host's first start
 * pays for neither the file's creation nor its write (a Python writer thread needs the GIL, and
 * the host's next call waited for it). Only for a per-user folder (private files, nothing to
 * share). A folder removed meanwhile (another process cleared the cache, or removed the whole
 * cache) is made again with its missing parents, private (mode 700); any other failure is kept
 * (errno and folder) for Python, which stops writing to that folder. Only the first failure
 * between two waits is kept: the writes of one process go to one folder (a folder whose name
 * would not fit the kept copy is never queued: Python writes those itself).
 * Waits (before the statistics are saved, at exit, before a fork, before a lookup of an entry
 * still queued) go through `_tinytc_py_write_wait`, which releases no lock it does not hold:
 * cffi calls it without the GIL. The thread (named "tinytc-writer", with every signal blocked,
 * so the host's handlers never run on it) stays, idle, once started, which is why the library
 * is never unloaded (capi/build.py links it with -z nodelete: dlclose would unmap the code and
 * the condition variable the thread waits on); a forked child starts without it (the parent
 * drained its queue before the fork: stats.save_all). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

struct _tinytc_py_job {
    struct _tinytc_py_job *next;
    char *dir;
    char *file;
    unsigned char *data;
    size_t size;
};

static pthread_mutex_t _tinytc_py_wb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t _tinytc_py_wb_work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t _tinytc_py_wb_idle = PTHREAD_COND_INITIALIZER;
static struct _tinytc_py_job *_tinytc_py_wb_head = NULL, *_tinytc_py_wb_tail = NULL;
static struct _tinytc_py_job *_tinytc_py_wb_running = NULL;
static int _tinytc_py_wb_thread = 0; /* whether the writer thread runs */
static int _tinytc_py_wb_errno = 0;  /* the first failure not yet reported, and its folder */
static char _tinytc_py_wb_errdir[4096];

static void _tinytc_py_job_free(struct _tinytc_py_job *job) {
    free(job->dir);
    free(job->file);
    free(job->data);
    free(job);
}

/* Makes folder `dir` and its missing parents, each private (mode 700); 0 or -1 (errno). */
static int _tinytc_py_make_dirs(const char *dir) {
    char *path = strdup(dir);
    char *slash;
    int err = 0;
    if (!path) {
        errno = ENOMEM;
        return -1;
    }
    for (slash = strchr(path + 1, '/');; slash = strchr(slash + 1, '/')) {
        if (slash) {
            *slash = '\0';
        }
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            err = errno;
            break;
        }
        if (!slash) {
            break;
        }
        *slash = '/';
    }
    free(path);
    errno = err;
    return err ? -1 : 0;
}

/* dir/.tmp-XXXXXX written and renamed to dir/file; 0 or an errno. */
static int _tinytc_py_write_file(struct _tinytc_py_job *job) {
    size_t n = strlen(job->dir) + strlen(job->file) + 16;
    char *tmp = (char *)malloc(n), *path = (char *)malloc(n);
    size_t done = 0;
    int fd, err = 0;
    if (!tmp || !path) {
        free(tmp);
        free(path);
        return ENOMEM;
    }
    snprintf(tmp, n, "%s/.tmp-XXXXXX", job->dir);
    snprintf(path, n, "%s/%s", job->dir, job->file);
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) { /* removed since: made again, private (mode 700) */
        snprintf(tmp, n, "%s/.tmp-XXXXXX", job->dir);
        if (_tinytc_py_make_dirs(job->dir) == 0) {
            fd = mkostemp(tmp, O_CLOEXEC);
        }
    }
    if (fd < 0) {
        err = errno;
    } else {
        while (done < job->size) {
            ssize_t w = write(fd, job->data + done, job->size - done);
            if (w < 0) {
                if (errno == EINTR) {
                    continue;
                }
                err = errno;
                break;
            }
            done += (size_t)w;
        }
        /* EINTR: Linux closed the descriptor all the same (it must not be closed again) */
        if (close(fd) != 0 && errno != EINTR && !err) {
            err = errno;
        }
        if (!err && rename(tmp, path) != 0) {
            /* ENOENT: another process cleared the cache meanwhile (its temporary files too):
             * the entry is gone as if the clear came just after it */
            err = errno == ENOENT ? -1 : errno;
        }
        if (err) {
            unlink(tmp);
        }
        err = err < 0 ? 0 : err;
    }
    free(tmp);
    free(path);
    return err;
}

static void *_tinytc_py_writer(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "tinytc-writer");
    pthread_mutex_lock(&_tinytc_py_wb_lock);
    for (;;) {
        struct _tinytc_py_job *job;
        int err;
        while (!_tinytc_py_wb_head) {
            pthread_cond_wait(&_tinytc_py_wb_work, &_tinytc_py_wb_lock);
        }
        job = _tinytc_py_wb_head;
        _tinytc_py_wb_head = job->next;
        if (!_tinytc_py_wb_head) {
            _tinytc_py_wb_tail = NULL;
        }
        _tinytc_py_wb_running = job;
        pthread_mutex_unlock(&_tinytc_py_wb_lock);
        err = _tinytc_py_write_file(job);
        pthread_mutex_lock(&_tinytc_py_wb_lock);
        if (err && !_tinytc_py_wb_errno) {
            _tinytc_py_wb_errno = err;
            snprintf(_tinytc_py_wb_errdir, sizeof(_tinytc_py_wb_errdir), "%s", job->dir);
        }
        _tinytc_py_wb_running = NULL;
        _tinytc_py_job_free(job);
        pthread_cond_broadcast(&_tinytc_py_wb_idle);
    }
    return NULL;
}

/* Queues file `file` of folder `dir` with `size` bytes of `data` (copied); 0 when queued, else
 * the caller writes it itself. */
static int _tinytc_py_write_behind(const char *dir, const char *file, const char *data,
                                   size_t size) {
    struct _tinytc_py_job *job;
    if (strlen(dir) >= sizeof(_tinytc_py_wb_errdir)) {
        return 1; /* its failure's folder would not fit: written by Python */
    }
    job = (struct _tinytc_py_job *)calloc(1, sizeof(*job));
    if (!job || !(job->dir = strdup(dir)) || !(job->file = strdup(file)) ||
        !(job->data = (unsigned char *)malloc(size ? size : 1))) {
        if (job) {
            _tinytc_py_job_free(job);
        }
        return 1;
    }
    memcpy(job->data, data, size);
    job->size = size;
    pthread_mutex_lock(&_tinytc_py_wb_lock);
    if (!_tinytc_py_wb_thread) {
        pthread_t thread;
        pthread_attr_t attr;
        sigset_t all, old;
        int failed = pthread_attr_init(&attr) != 0;
        sigfillset(&all); /* a new thread has its creator's mask: every signal, meanwhile */
        failed = failed || pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) != 0 ||
                 pthread_sigmask(SIG_SETMASK, &all, &old) != 0;
        if (!failed) {
            failed = pthread_create(&thread, &attr, _tinytc_py_writer, NULL) != 0;
            pthread_sigmask(SIG_SETMASK, &old, NULL);
        }
        pthread_attr_destroy(&attr);
        if (failed) {
            pthread_mutex_unlock(&_tinytc_py_wb_lock);
            _tinytc_py_job_free(job);
            return 1;
        }
        _tinytc_py_wb_thread = 1;
    }
    if (_tinytc_py_wb_tail) {
        _tinytc_py_wb_tail->next = job;
    } else {
        _tinytc_py_wb_head = job;
    }
    _tinytc_py_wb_tail = job;
    pthread_cond_signal(&_tinytc_py_wb_work);
    pthread_mutex_unlock(&_tinytc_py_wb_lock);
    return 0;
}

/* Whether `job` writes `file`, or a file whose name begins with it (an entry's key). */
static int _tinytc_py_job_named(const struct _tinytc_py_job *job, const char *file) {
    return job && (!file || strncmp(job->file, file, strlen(file)) == 0);
}

/* Waits until no write is queued or running (with `file` non-NULL: until none whose name
 * begins with `file` is, so "" waits for all), then returns the errno of the first failure
 * since the last call (0: none), whose folder `_tinytc_py_write_failed_in` tells. */
static int _tinytc_py_write_wait(const char *file) {
    int err;
    pthread_mutex_lock(&_tinytc_py_wb_lock);
    for (;;) {
        const struct _tinytc_py_job *job = _tinytc_py_wb_head;
        int busy = _tinytc_py_job_named(_tinytc_py_wb_running, file);
        for (; job && !busy; job = job->next) {
            busy = _tinytc_py_job_named(job, file);
        }
        if (!busy) {
            break;
        }
        pthread_cond_wait(&_tinytc_py_wb_idle, &_tinytc_py_wb_lock);
    }
    err = _tinytc_py_wb_errno;
    _tinytc_py_wb_errno = 0;
    pthread_mutex_unlock(&_tinytc_py_wb_lock);
    return err;
}

/* The folder of the failure `_tinytc_py_write_wait` returned last, copied into `dir`. */
static void _tinytc_py_write_failed_in(char *dir, size_t size) {
    pthread_mutex_lock(&_tinytc_py_wb_lock);
    snprintf(dir, size, "%s", _tinytc_py_wb_errdir);
    pthread_mutex_unlock(&_tinytc_py_wb_lock);
}

/* A forked child has no writer thread (its queue was drained before the fork). */
static void _tinytc_py_wb_after_fork_child(void) {
    pthread_mutex_init(&_tinytc_py_wb_lock, NULL);
    pthread_cond_init(&_tinytc_py_wb_work, NULL);
    pthread_cond_init(&_tinytc_py_wb_idle, NULL);
    _tinytc_py_wb_head = _tinytc_py_wb_tail = _tinytc_py_wb_running = NULL;
    _tinytc_py_wb_thread = 0;
}

/* Installs the child's fork handler; 0 on success (then writes may go behind). */
static int _tinytc_py_write_behind_start(void) {
    return pthread_atfork(NULL, NULL, _tinytc_py_wb_after_fork_child) != 0;
}
