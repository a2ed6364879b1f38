/* Temporary names: a file being written whole (created, compacted, rewritten) gets one in
 * the directory of the file it becomes, and is renamed over it when complete. One format
 * for every program of b2fs, so that each recognises the others' (the mount hides them,
 * and removes ones left by a process that died). Calls: libc only. */
#include "frame/frame.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char prefix[] = B2F_TEMP_PREFIX;

int b2f_is_temp_name(const char *name)
{
    return strncmp(name, prefix, sizeof prefix - 1) == 0;
}

long b2f_temp_name_pid(const char *name)
{
    long pid = 0;
    if (!b2f_is_temp_name(name) || sscanf(name + sizeof prefix - 1, "%ld-", &pid) != 1)
        return -1;
    return pid;
}

void b2f_temp_name(char *out, size_t cap)
{
    static unsigned long counter;
    snprintf(out, cap, "%s%ld-%lu", prefix, (long)getpid(),
             __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
}
