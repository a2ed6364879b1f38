/* Per-thread scratch buffers (scratch.h). */
#include "fs/scratch.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_key_make(void)
{
    pthread_key_create(&scratch_key, free);
}

uint8_t *scratch_get(size_t len)
{
    if (len > SCRATCH_KEEP)
        return malloc(len);
    pthread_once(&scratch_once, scratch_key_make);
    size_t *s = pthread_getspecific(scratch_key);
    if (s && s[0] >= len)
        return (uint8_t *)(s + 1);
    free(s);
    s = malloc(sizeof *s + len);
    pthread_setspecific(scratch_key, s);
    if (!s)
        return NULL;
    s[0] = len;
    return (uint8_t *)(s + 1);
}

void scratch_done(uint8_t *p, size_t len)
{
    if (len > SCRATCH_KEEP)
        free(p);
}
