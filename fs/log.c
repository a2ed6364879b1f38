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
    /* The codec's B2E_* codes overlap small errno values; they all mean bad data or
     * no memory, except that -ENOSPC and friends come from system calls. */
    switch (code) {
    case B2E_NOMEM:
        return -ENOMEM;
    case -ENOSPC:
    case -EDQUOT:
    case -EFBIG:
    case -EROFS:
    case -EACCES:
        return code;
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
