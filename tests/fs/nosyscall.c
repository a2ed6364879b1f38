/* Preloaded into b2fs by tests (LD_PRELOAD): syscall(2) refuses with ENOSYS the calls
 * named in NOSYSCALL (comma separated: openat2, cachestat), as kernels without them do
 * (openat2 before 5.6, cachestat before 6.5), and creates the file NOSYSCALL_MARK when it
 * refused one; every other system call goes to libc's syscall. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif

typedef long (*syscall_fn)(long, ...);

static int named(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, name, len) && (p[len] == ',' || p[len] == 0))
            return 1;
    return 0;
}

static int refused(long number)
{
    const char *list = getenv("NOSYSCALL");
    return (number == SYS_openat2 && named(list, "openat2")) ||
           (number == SYS_cachestat && named(list, "cachestat"));
}

long syscall(long number, ...)
{
    if (refused(number)) {
        const char *mark = getenv("NOSYSCALL_MARK");
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
