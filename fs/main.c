/* b2fs [options] BACKING MOUNTPOINT */
#include "fs/ops.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char *argv[])
{
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    int r = b2fs_options_parse(&args, &b2fs_cfg);
    if (r) {
        fuse_opt_free_args(&args);
        return r > 0 ? 0 : 1;
    }
#ifdef __GLIBC__
    /* Chunk images and encoded chunks, about a chunk each, come and go by the hundred a
     * second while files are written, on FUSE's threads and the workers. By default
     * glibc maps each afresh or trims its heap at once, and every page is faulted in and
     * zeroed again; with its 8 arenas a core, each keeps its own free memory. A single
     * `cp` of 512 MiB took 80,000 page faults (17,000 this way), and 4 at once a third
     * more CPU time. A commit after a writer is done gives the memory back (node_commit). */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    mallopt(M_ARENA_MAX, ncpu < 2 ? 2 : ncpu > 8 ? 8 : (int)ncpu);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 16 << 20);
#endif
    /* the modes FUSE passes have the caller's umask applied already */
    umask(0);
    fuse_opt_add_arg(&args, "-osubtype=b2fs");
    /* libfuse 3.14 warns about max_idle_threads unless it is given */
    int given = 0;
    for (int i = 0; i < args.argc; i++)
        given |= strstr(args.argv[i], "max_idle_threads=") != NULL;
    if (!given)
        fuse_opt_add_arg(&args, "-omax_idle_threads=10");
    if (!strchr(b2fs_cfg.backing, ',') && strlen(b2fs_cfg.backing) < 4000) {
        char opt[4100];
        snprintf(opt, sizeof opt, "-ofsname=%s", b2fs_cfg.backing);
        fuse_opt_add_arg(&args, opt);
    }
    r = fuse_main(args.argc, args.argv, &b2fs_ops, NULL);
    fuse_opt_free_args(&args);
    return r;
}
