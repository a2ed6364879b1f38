/* b2frame meta: list, show, set and delete metalayers and vlmetalayers. */
#include "contrib/b2frame.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char meta_usage[] =
    "Usage: b2frame meta FILE                 list metalayers and vlmetalayers\n"
    "       b2frame meta FILE NAME            write the content of NAME to stdout\n"
    "       b2frame meta FILE NAME VALUE      set vlmetalayer NAME to VALUE (- for stdin)\n"
    "       b2frame meta -m FILE NAME VALUE   update metalayer NAME (same length only)\n"
    "       b2frame meta -d FILE NAME         delete vlmetalayer NAME\n"
    "Metalayers are fixed when a frame is made (C-Blosc2 allows same-size updates only);\n"
    "vlmetalayers can be added, changed and deleted at any time. A change is committed\n"
    "to FILE before the command returns.\n";

/* VALUE, or all of stdin for "-". */
static uint8_t *value_bytes(const char *arg, size_t *len)
{
    if (strcmp(arg, "-")) {
        *len = strlen(arg);
        uint8_t *v = malloc(*len ? *len : 1);
        if (v)
            memcpy(v, arg, *len);
        return v;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        ssize_t r = read(STDIN_FILENO, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r < 0) {
                free(buf);
                buf = NULL;
            }
            break;
        }
        n += (size_t)r;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    *len = n;
    return buf;
}

static int show_one(bt_input *in, const char *name)
{
    const uint8_t *v;
    uint8_t *owned = NULL;
    size_t len;
    int rc = b2f_meta_get(in->frame, name, &v, &len);
    if (rc == B2F_ENOTFOUND) {
        rc = b2f_vlmeta_get(in->frame, name, &owned, &len);
        v = owned;
    }
    if (rc == B2F_ENOTFOUND) {
        bt_error(in->path, "no metalayer or vlmetalayer named '%s'", name);
        return BT_FAIL;
    }
    if (rc < 0) {
        bt_error(in->path, "%s: %s", name, b2f_strerror(rc));
        return BT_FAIL;
    }
    rc = bt_write_all(STDOUT_FILENO, v, len);
    free(owned);
    if (rc < 0) {
        bt_error("stdout", "write failed: %s", strerror(-rc));
        return BT_FAIL;
    }
    return BT_OK;
}

enum change { SET_VLMETA, UPDATE_META, DELETE_VLMETA };

static int change_one(bt_input *in, enum change what, const char *name, const char *arg)
{
    size_t len = 0;
    uint8_t *v = NULL;
    if (what != DELETE_VLMETA && !(v = value_bytes(arg, &len))) {
        bt_error(arg, "cannot read the value: %s", strerror(errno ? errno : ENOMEM));
        return BT_FAIL;
    }
    const uint8_t *old;
    size_t old_len;
    if (what == UPDATE_META && b2f_meta_get(in->frame, name, &old, &old_len) == 0 &&
        old_len != len) {
        bt_error(in->path, "metalayer %s holds %zu bytes; an update must keep that size (%zu given)",
                 name, old_len, len);
        free(v);
        return BT_FAIL;
    }
    int rc = what == SET_VLMETA    ? b2f_vlmeta_set(in->frame, name, v, len)
             : what == UPDATE_META ? b2f_meta_update(in->frame, name, v, len)
                                   : b2f_vlmeta_delete(in->frame, name);
    free(v);
    char err[512] = "";
    if (rc < 0) {
        bt_error(in->path, "%s: %s", name, b2f_strerror(rc));
        return BT_FAIL;
    }
    if ((rc = b2f_commit(in->frame, 1, err, sizeof err)) < 0) {
        bt_error(in->path, "commit: %s", bt_reason(rc, err));
        return BT_FAIL;
    }
    return BT_OK;
}

int bt_cmd_meta(int argc, char **argv)
{
    static const struct option longopts[] = {{"meta", no_argument, NULL, 'm'},
                                              {"delete", no_argument, NULL, 'd'},
                                              {"help", no_argument, NULL, 'h'},
                                              {NULL, 0, NULL, 0}};
    enum change what = SET_VLMETA;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "mdh", longopts, NULL)) != -1) {
        if (c == 'm')
            what = UPDATE_META;
        else if (c == 'd')
            what = DELETE_VLMETA;
        else
            return bt_usage(meta_usage, c == 'h' ? BT_OK : BT_USAGE);
    }
    int nargs = argc - optind;
    int changing = what == DELETE_VLMETA ? nargs == 2 : nargs == 3;
    if (nargs < 1 || nargs > 3 || (what != SET_VLMETA && !changing)) {
        bt_error(NULL, "meta: wrong number of arguments");
        return bt_usage(meta_usage, BT_USAGE);
    }
    bt_input in;
    const char *path = argv[optind];
    if (bt_open_input(&in, path, changing ? B2F_RDWR : B2F_RDONLY, 0) != BT_OK)
        return BT_FAIL;
    int status;
    if (changing)
        status = change_one(&in, what, argv[optind + 1], nargs == 3 ? argv[optind + 2] : NULL);
    else if (nargs == 2)
        status = show_one(&in, argv[optind + 1]);
    else
        status = bt_list_meta(&in) < 0 ? BT_FAIL : BT_OK;
    bt_close_input(&in);
    return status;
}
