/* The one dispatch point: which kernel set the public functions use, chosen once from
 * the CPU's features and the environment variable B2FS_SIMD. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shuffle/kernels.h"
#include "shuffle/shuffle.h"

static int cpu_runs(const char *name)
{
#ifdef B2K_HAVE_X86
    __builtin_cpu_init();
    if (strcmp(name, "avx2") == 0)
        return __builtin_cpu_supports("avx2");
    if (strcmp(name, "sse2") == 0)
        return __builtin_cpu_supports("sse2");
#endif
    return strcmp(name, "generic") == 0;
}

const b2_kernels *b2k_by_name(const char *name)
{
    static const b2_kernels *const all[] = {
#ifdef B2K_HAVE_X86
        &b2k_avx2, &b2k_sse2,
#endif
        &b2k_generic,
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(all[i]->name, name) == 0)
            return cpu_runs(name) ? all[i] : NULL;
    return NULL;
}

static const b2_kernels *active;
static pthread_once_t active_once = PTHREAD_ONCE_INIT;

/* A forced set this CPU cannot run (or an unknown name) falls back to the best one. */
static void choose(void)
{
    const char *forced = getenv("B2FS_SIMD");
    if (forced != NULL && (active = b2k_by_name(forced)) != NULL)
        return;
    static const char *const best_first[] = { "avx2", "sse2", "generic" };
    for (size_t i = 0; i < 3 && active == NULL; i++)
        active = b2k_by_name(best_first[i]);
}

const b2_kernels *b2k_active(void)
{
    pthread_once(&active_once, choose);
    return active;
}

const char *b2_shuffle_impl(void)
{
    return b2k_active()->name;
}

void b2_shuffle(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst)
{
    b2k_shuffle_block(b2k_active(), typesize, len, src, dst);
}

void b2_unshuffle(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst)
{
    b2k_unshuffle_block(b2k_active(), typesize, len, src, dst);
}

void b2_bitshuffle(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst,
                   int blosc1_layout)
{
    b2k_bitshuffle_block(b2k_active(), typesize, len, src, dst, blosc1_layout);
}

void b2_bitunshuffle(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst,
                     int blosc1_layout)
{
    b2k_bitunshuffle_block(b2k_active(), typesize, len, src, dst, blosc1_layout);
}
