/* Logs: stderr while in the foreground, syslog once daemonised. */
#include "fs/b2fs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

static int use_syslog;

void b2fs_log_to_syslog(void)
{
    openlog("b2fs", LOG_PID, LOG_DAEMON);
    use_syslog = 1;
}

void b2fs_log(int prio, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (use_syslog) {
        vsyslog(prio, fmt, ap);
    } else {
        char line[1024];
        vsnprintf(line, sizeof line, fmt, ap);
        fprintf(stderr, "b2fs: %s\n", line);
    }
    va_end(ap);
}

int b2fs_errno(int code)
{
    if (code >= 0)
        return 0;
    /* -errno of a failed system call (ENOSPC, EDQUOT, EACCES, ...) is the answer itself;
     * b2fs's own codes (codec/chunk.h) mean bad data unless named here */
    if (b2_is_errno(code))
        return code;
    switch (code) {
    case B2E_NOMEM:
        return -ENOMEM;
    case B2F_ERDONLY:
        return -EROFS;
    case B2F_ETOOBIG:
        return -EFBIG;
    case B2F_ERANGE:
        return -EINVAL;
    case B2F_ENOTFOUND:
        return -ENODATA;
    default:
        return -EIO;
    }
}
