/* Preloaded into b2fs by tests/fs/mount_locks.sh (LD_PRELOAD): fcntl refuses OFD locks with
 * EINVAL, as a file system without them does; every other command goes to libc's fcntl. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>

typedef int (*fcntl_fn)(int, int, ...);

int fcntl(int fd, int cmd, ...);
int fcntl64(int fd, int cmd, ...) __attribute__((alias("fcntl")));

int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);   /* an int or a pointer: one register either way */
    va_end(ap);
    if (cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW || cmd == F_OFD_GETLK) {
        errno = EINVAL;
        return -1;
    }
    /* glibc's fcntl64 takes every command, with 64-bit offsets */
    fcntl_fn real = (fcntl_fn)dlsym(RTLD_NEXT, "fcntl64");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(fd, cmd, arg);
}
