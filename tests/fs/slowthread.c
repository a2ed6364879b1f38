/* Preloaded into b2fs by tests/fs/mount_behind.sh (LD_PRELOAD): a thread that gives itself
 * the name SLOWTHREAD_NAME (pthread_setname_np, the first thing b2fs's threads do) sleeps
 * SLOWTHREAD_MS milliseconds first, as on a machine too busy to run it at once, and
 * creates the file SLOWTHREAD_MARK; every other call goes to libc's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*setname_fn)(pthread_t, const char *);

int pthread_setname_np(pthread_t thread, const char *name)
{
    const char *slow = getenv("SLOWTHREAD_NAME"), *ms = getenv("SLOWTHREAD_MS");
    if (slow && ms && !strcmp(slow, name) && pthread_equal(thread, pthread_self())) {
        const char *mark = getenv("SLOWTHREAD_MARK");
        int fd = mark ? open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) : -1;
        if (fd >= 0)
            close(fd);
        long n = atol(ms);
        struct timespec t = {n / 1000, (n % 1000) * 1000000L};
        while (nanosleep(&t, &t) < 0 && errno == EINTR)
            ;
    }
    setname_fn real = (setname_fn)dlsym(RTLD_NEXT, "pthread_setname_np");
    return real ? real(thread, name) : ENOSYS;
}
