/* frame/: how a process that writes frames wants glibc's malloc to behave.
 * Calls: libc only. */
#include "frame/frame.h"

#ifdef __GLIBC__
#include <malloc.h>
#include <unistd.h>
#endif

void b2f_malloc_policy(void)
{
#ifdef __GLIBC__
    /* Chunk images and encoded chunks, about a chunk each, come and go by the hundred a
     * second while frames are written, and staged chunks are freed together at each
     * commit. By default glibc maps each afresh or trims its heap at once, and every page
     * is faulted in and zeroed again; with its 8 arenas a core, each keeps its own free
     * memory. A single `cp` of 512 MiB into a mount took 80,000 page faults (17,000 this
     * way), 4 at once a third more CPU time; `b2frame pack` of 512 MiB of floats spent
     * half its CPU time faulting. The daemon gives the memory back after a writer is
     * done (node_commit). */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    mallopt(M_ARENA_MAX, ncpu < 2 ? 2 : ncpu > 8 ? 8 : (int)ncpu);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 16 << 20);
#endif
}
