/* Preloaded into b2fs by tests/fs/mount_paths.sh (LD_PRELOAD): syscall(SYS_openat2, ...)
 * fails with ENOSYS, as on kernels before 5.6, so that paths resolve one directory at a
 * time; every other system call goes to libc's syscall. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

typedef long (*syscall_fn)(long, ...);

long syscall(long number, ...)
{
    if (number == SYS_openat2) {
        const char *mark = getenv("NOOPENAT2_MARK");
        int fd = mark ? open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) : -1;
        if (fd >= 0)
            close(fd);
        errno = ENOSYS;
        return -1;
    }
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);   /* (each argument is one register) */
    va_end(ap);
    syscall_fn real = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
