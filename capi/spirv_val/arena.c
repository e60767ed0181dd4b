/* Arena allocation for the in-process validator (spirv_val.c).
 *
 * Why: SPIRV-Tools' validator makes tens of thousands of small C++ allocations per module
 * (about 23 bytes allocated per byte of SPIR-V) and frees them all before it returns; malloc
 * and free were a quarter to a third of its time. This file replaces C++ operator new and
 * delete inside libtinytc_spirv_val.so only (libstdc++ is linked statically and its symbols
 * are hidden, so every new and delete of the library, libstdc++'s own included, comes here;
 * nothing outside the library is affected). While a validation runs (arena_begin ..
 * arena_end on the calling thread), new takes memory from the end of a chunk and delete only
 * counts; when the validation ends with nothing left alive, the chunk is rewound for the next
 * one. Outside a validation (static constructors and destructors), new and delete are malloc
 * and free.
 *
 * Safety: a delete tells arena memory from malloc memory by address (the chunks are known).
 * If a validation ends with objects still alive (a static the library creates on first use),
 * its chunks are abandoned: kept for ever, listed, and deletes of their objects do nothing.
 * To make that rare, the process's first validation takes no arena (it and the validations
 * that start before it ends use malloc), so the statics its module needs are made by malloc.
 * Abandoned chunks are counted, and once they add up to 16 MiB no validation takes an arena
 * any more: what a process keeps for this is bounded, at worst it is as slow as malloc.
 * Arenas are pooled, so threads validating at the same time each use their own, and a
 * thread's exit leaves nothing behind. Requests of 64 KiB or more go to malloc directly, and
 * an arena keeps at most 16 MiB between validations. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define ALIGN 16
#define FIRST_CHUNK (1u << 20)
#define DIRECT_SIZE (64u << 10)
#define KEEP_AT_MOST (16u << 20)
#define ABANDON_AT_MOST (16u << 20)

typedef struct chunk {
    struct chunk *next;
    size_t size; /* bytes, this header included */
} chunk;

typedef struct arena {
    struct arena *next_free;
    chunk *chunks; /* newest first; the bump pointer is in the first */
    char *cur, *end;
    size_t live;  /* allocations not yet deleted */
    size_t total; /* bytes of all chunks */
} arena;

#define HEADER ((sizeof(chunk) + ALIGN - 1) & ~(size_t)(ALIGN - 1))

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static arena *pool;                /* arenas not in use */
static chunk *abandoned;           /* chunks holding objects that outlived a validation */
static size_t abandoned_bytes;     /* their total size; written under pool_lock */
static int first_ended;            /* whether the process's first validation has ended */
static __thread arena *current;    /* this thread's arena during a validation, else NULL */

static int contains(const chunk *c, const void *p) {
    return (const char *)p >= (const char *)c && (const char *)p < (const char *)c + c->size;
}

static int add_chunk(arena *a, size_t need) {
    size_t size = a->chunks ? a->chunks->size * 2 : FIRST_CHUNK;
    while (size < need + HEADER) {
        size *= 2;
    }
    chunk *c = malloc(size);
    if (!c) {
        return 0;
    }
    c->next = a->chunks;
    c->size = size;
    a->chunks = c;
    a->total += size;
    a->cur = (char *)c + HEADER;
    a->end = (char *)c + size;
    return 1;
}

static void *allocate(size_t n) {
    arena *a = current;
    if (n > SIZE_MAX - ALIGN) {
        return NULL; /* rounding up would wrap to a zero-byte block */
    }
    n = n ? (n + ALIGN - 1) & ~(size_t)(ALIGN - 1) : ALIGN;
    if (a && n < DIRECT_SIZE && ((size_t)(a->end - a->cur) >= n || add_chunk(a, n))) {
        void *p = a->cur;
        a->cur += n;
        a->live++;
        return p;
    }
    return malloc(n);
}

static void release(void *p) {
    if (!p) {
        return;
    }
    arena *a = current;
    if (a) {
        for (const chunk *c = a->chunks; c; c = c->next) {
            if (contains(c, p)) {
                a->live--;
                return;
            }
        }
    }
    for (const chunk *c = __atomic_load_n(&abandoned, __ATOMIC_ACQUIRE); c; c = c->next) {
        if (contains(c, p)) {
            return;
        }
    }
    free(p);
}

static void free_chunks(arena *a) {
    while (a->chunks) {
        chunk *next = a->chunks->next;
        free(a->chunks);
        a->chunks = next;
    }
    a->cur = a->end = NULL;
    a->total = 0;
}

/* Returns NULL for the first validation (and those that start before it ends), once too
 * much was abandoned, and when no arena can be made: such validations use malloc. */
static arena *take_arena(void) {
    if (!__atomic_load_n(&first_ended, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&abandoned_bytes, __ATOMIC_RELAXED) >= ABANDON_AT_MOST) {
        return NULL;
    }
    pthread_mutex_lock(&pool_lock);
    arena *a = pool;
    if (a) {
        pool = a->next_free;
    }
    pthread_mutex_unlock(&pool_lock);
    return a ? a : calloc(1, sizeof(arena));
}

void arena_begin(void) { current = take_arena(); }

size_t arena_abandoned_bytes(void) { return __atomic_load_n(&abandoned_bytes, __ATOMIC_RELAXED); }

void arena_end(void) {
    arena *a = current;
    current = NULL;
    __atomic_store_n(&first_ended, 1, __ATOMIC_RELEASE);
    if (!a) {
        return;
    }
    if (a->live) {
        /* Abandon every chunk (still alive objects may be in any of them). Publishing is
         * under the pool lock; readers walk the list without it (nodes are never removed). */
        pthread_mutex_lock(&pool_lock);
        __atomic_store_n(&abandoned_bytes, abandoned_bytes + a->total, __ATOMIC_RELAXED);
        while (a->chunks) {
            chunk *next = a->chunks->next;
            a->chunks->next = abandoned;
            __atomic_store_n(&abandoned, a->chunks, __ATOMIC_RELEASE);
            a->chunks = next;
        }
        pthread_mutex_unlock(&pool_lock);
        a->cur = a->end = NULL;
        a->total = 0;
        a->live = 0;
    } else if (a->chunks && a->chunks->next) {
        /* Several chunks: next time one of their total size (if not too big) suffices. */
        size_t total = a->total;
        free_chunks(a);
        if (total <= KEEP_AT_MOST) {
            add_chunk(a, total - HEADER);
        }
    } else if (a->chunks) {
        a->cur = (char *)a->chunks + HEADER;
    }
    pthread_mutex_lock(&pool_lock);
    a->next_free = pool;
    pool = a;
    pthread_mutex_unlock(&pool_lock);
}

/* The replaceable allocation functions the library uses (Itanium C++ ABI names), hidden by
 * -fvisibility=hidden. Throwing new has nowhere to throw to here (the validator is built
 * without exceptions), so running out of memory aborts, as an uncaught bad_alloc would. */
void *_Znwm(size_t n) {
    void *p = allocate(n);
    if (!p) {
        abort();
    }
    return p;
}
void *_Znam(size_t n) { return _Znwm(n); }
void *_ZnwmRKSt9nothrow_t(size_t n, const void *tag) { (void)tag; return allocate(n); }
void *_ZnamRKSt9nothrow_t(size_t n, const void *tag) { (void)tag; return allocate(n); }
void _ZdlPv(void *p) { release(p); }
void _ZdaPv(void *p) { release(p); }
void _ZdlPvm(void *p, size_t n) { (void)n; release(p); }
void _ZdaPvm(void *p, size_t n) { (void)n; release(p); }
void _ZdlPvRKSt9nothrow_t(void *p, const void *tag) { (void)tag; release(p); }
void _ZdaPvRKSt9nothrow_t(void *p, const void *tag) { (void)tag; release(p); }
