/* fs/log: the daemon's log lines.
 *
 * Owns: where lines go (stderr in the foreground, syslog once daemonised; chosen once at
 * mount, before any other thread starts). Each call writes one whole line, from any
 * thread. Calls: libc only.
 *
 * Only fs/ logs, and only where the backing file's name is known; the layers below
 * return codes and reasons (docs/ARCHITECTURE.md, "Errors"). */
#ifndef B2FS_LOG_H
#define B2FS_LOG_H

#include <syslog.h>

void b2fs_log_to_syslog(void);
void b2fs_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
