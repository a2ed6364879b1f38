/* b2fs [options] BACKING MOUNTPOINT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/options.h"
#include "fs/ops.h"

int main(int argc, char *argv[])
{
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    int r = b2fs_options_parse(&args, &b2fs_cfg);
    if (r) {
        fuse_opt_free_args(&args);
        return r > 0 ? 0 : 1;
    }
    b2f_malloc_policy();
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
