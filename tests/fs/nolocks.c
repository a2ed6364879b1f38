/* Preloaded into b2fs by tests/fs/mount_locks.sh (LD_PRELOAD): fcntl refuses OFD locks with
 * EINVAL, as a file system without them does; every other command goes to libc's fcntl. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>

typedef int (*fcntl_fn)(int, int, ...);

static int pass_on(const char *name, int fd, int cmd, va_list ap)
{
    void *arg = va_arg(ap, void *);   /* an int or a pointer: one register either way */
    if (cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW || cmd == F_OFD_GETLK) {
        errno = EINVAL;
        return -1;
    }
    fcntl_fn real = (fcntl_fn)dlsym(RTLD_NEXT, name);
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(fd, cmd, arg);
}

int fcntl(int fd, int cmd, ...);
int fcntl64(int fd, int cmd, ...);

int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    int r = pass_on("fcntl", fd, cmd, ap);
    va_end(ap);
    return r;
}

int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    int r = pass_on("fcntl64", fd, cmd, ap);
    va_end(ap);
    return r;
}
