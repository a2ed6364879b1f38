/* Log lines: stderr while in the foreground, syslog once daemonised. */
#include "fs/log.h"

#include <stdarg.h>
#include <stdio.h>

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
