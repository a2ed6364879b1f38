/* b2frame info: parameters, sizes, ratio, chunks, metalayers; as text or JSON. */
#include "contrib/b2frame.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define PREVIEW 32   /* bytes of a metalayer shown in text mode */

static const char info_usage[] =
    "Usage: b2frame info [--json] [--chunks] FILE...\n"
    "Shows what FILE holds (a Blosc2 frame, a Bloscpack file or a single Blosc chunk):\n"
    "codec, clevel, filters, typesize, chunksize, blocksize, chunk counts, sizes in bytes,\n"
    "compression ratio, an array's shape, chunk and block shapes and dtype (b2nd.*, from\n"
    "its b2nd metalayer), and metalayers and vlmetalayers (meta.NAME, vlmeta.NAME: size\n"
    "and content, as text when printable, else hex). --json prints one JSON object per\n"
    "file, with whole metalayer contents in hex. --chunks (-c) adds one line per chunk:\n"
    "its offset in the contents, nbytes, cbytes, blocksize and special kind (zeros, nan,\n"
    "value, uninit).\n";

static const char *kind_name(int kind)
{
    return kind == B2F_KIND_FRAME ? "frame" : kind == B2F_KIND_BLOSCPACK ? "bloscpack" : "chunk";
}

static const char *split_name(int mode)
{
    switch (mode) {
    case B2_SPLIT_ALWAYS: return "always";
    case B2_SPLIT_NEVER: return "never";
    case B2_SPLIT_AUTO: return "auto";
    case B2_SPLIT_FORWARD_COMPAT: return "forward-compat";
    default: return "unknown";
    }
}

static int printable(const uint8_t *v, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((v[i] < 0x20 || v[i] > 0x7e) && v[i] != '\n' && v[i] != '\t')
            return 0;
    return len > 0;
}

static void put_hex(const uint8_t *v, size_t len)
{
    for (size_t i = 0; i < len; i++)
        printf("%02x", v[i]);
}

static void put_json_string(const char *s, size_t len)
{
    putchar('"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c == '\n')
            fputs("\\n", stdout);
        else if (c == '\t')
            fputs("\\t", stdout);
        else if (c < 0x20 || c > 0x7e)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* What both output forms show: a frame's stat, or a chunk's header made to look like one. */
typedef struct summary {
    b2f_stat st;
    int64_t nspecial, dead;
    char filters[128];
    const char *codec;
} summary;

static void fill_stat(const bt_input *in, summary *s)
{
    if (in->frame) {
        b2f_stat_get(in->frame, &s->st);
        for (int64_t n = 0; n < s->st.nchunks; n++)
            if (b2f_chunk_special(in->frame, n) > 0)
                s->nspecial++;
        s->dead = s->st.kind == B2F_KIND_FRAME ? b2f_dead_bytes(in->frame) : 0;
        if (s->st.kind == B2F_KIND_BLOSCPACK)
            s->st.clevel = -1;   /* Blosc1 chunks do not record it */
        return;
    }
    const b2_chunk_info *ci = &in->info;
    s->st.kind = 0;
    s->st.nbytes = s->st.chunksize = ci->nbytes;
    s->st.cbytes = s->st.file_len = ci->cbytes;
    s->st.nchunks = 1;
    s->st.blocksize = ci->blocksize;
    s->st.typesize = ci->typesize;
    s->st.codec = ci->codec;
    s->st.clevel = -1;
    s->st.splitmode = ci->dont_split ? B2_SPLIT_NEVER : B2_SPLIT_ALWAYS;
    memcpy(s->st.filters, ci->filters, sizeof s->st.filters);
    memcpy(s->st.filters_meta, ci->filters_meta, sizeof s->st.filters_meta);
    s->st.frame_version = ci->version;
    s->nspecial = ci->special != B2_SPECIAL_NONE;
}

static void summarize(const bt_input *in, summary *s)
{
    memset(s, 0, sizeof *s);
    fill_stat(in, s);
    if (b2_filters_format(s->st.filters, s->st.filters_meta, ',', s->filters, sizeof s->filters) < 0)
        snprintf(s->filters, sizeof s->filters, "unknown");
    s->codec = b2_codec_name(s->st.codec);
    if (!s->codec)
        s->codec = "unknown";
}

int bt_each_meta(const bt_input *in, int vl, bt_meta_fn *show)
{
    int count = !in->frame ? 0 : vl ? b2f_vlmeta_count(in->frame) : b2f_meta_count(in->frame);
    for (int i = 0; i < count; i++) {
        const char *name = vl ? b2f_vlmeta_name(in->frame, i) : b2f_meta_name(in->frame, i);
        const uint8_t *v = NULL;
        uint8_t *owned = NULL;
        size_t len;
        int rc = vl ? b2f_vlmeta_get(in->frame, name, &owned, &len)
                    : b2f_meta_get(in->frame, name, &v, &len);
        if (rc < 0) {
            bt_error(in->path, "%s %s: %s", vl ? "vlmetalayer" : "metalayer", name, b2f_strerror(rc));
            return rc;
        }
        show(name, vl ? owned : v, len, vl, i);
        free(owned);
    }
    return 0;
}

static void show_text_meta(const char *name, const uint8_t *v, size_t len, int vl, int i)
{
    printf("%s.%s: %zu bytes, ", vl ? "vlmeta" : "meta", name, len);
    if (printable(v, len)) {
        fputs("text ", stdout);
        for (size_t k = 0; k < len && k < 4 * PREVIEW; k++)
            putchar(v[k] == '\n' || v[k] == '\t' ? ' ' : v[k]);
        puts(len > 4 * PREVIEW ? " ..." : "");
    } else {
        fputs("hex ", stdout);
        put_hex(v, len < PREVIEW ? len : PREVIEW);
        puts(len > PREVIEW ? " ..." : "");
    }
}

static void show_json_meta(const char *name, const uint8_t *v, size_t len, int vl, int i)
{
    printf("%s{\"name\": ", i ? ", " : "");
    put_json_string(name, strlen(name));
    printf(", \"size\": %zu, \"hex\": \"", len);
    put_hex(v, len);
    putchar('"');
    if (printable(v, len)) {
        fputs(", \"text\": ", stdout);
        put_json_string((const char *)v, len);
    }
    putchar('}');
}

int bt_list_meta(const bt_input *in)
{
    int rc = bt_each_meta(in, 0, show_text_meta);
    return rc < 0 ? rc : bt_each_meta(in, 1, show_text_meta);
}

static const char *special_name(int special)
{
    static const char *const names[] = {"none", "zeros", "nan", "value", "uninit"};
    return special >= 0 && special < 5 ? names[special] : "unknown";
}

/* One line (or JSON object) per chunk. */
static int show_chunks(const bt_input *in, int json)
{
    b2f_stat st;
    if (!in->frame)
        return 0;
    b2f_stat_get(in->frame, &st);
    for (int64_t n = 0; n < st.nchunks; n++) {
        uint64_t off;
        int32_t nbytes;
        const b2_chunk_layout *lay;
        int rc = b2f_chunk_span(in->frame, n, &off, &nbytes);
        if (rc == 0)
            rc = b2f_chunk_layout(in->frame, n, &lay);
        if (rc < 0) {
            bt_error(in->path, "chunk %lld: %s", (long long)n, b2f_strerror(rc));
            return rc;
        }
        const char *special = special_name(lay->info.special);
        int64_t at;
        int summed;
        b2f_chunk_where(in->frame, n, &at, &summed);
        /* each chunk's own filters and typesize (they may differ chunk by chunk) */
        char filters[128];
        if (lay->info.memcpyed || lay->info.special != B2_SPECIAL_NONE)
            snprintf(filters, sizeof filters, "stored");
        else if (b2_filters_format(lay->info.filters, lay->info.filters_meta, ',', filters,
                                   sizeof filters) < 0)
            snprintf(filters, sizeof filters, "unknown");
        if (json)
            printf("%s{\"offset\": %llu, \"nbytes\": %d, \"cbytes\": %d, \"blocksize\": %d, "
                   "\"special\": \"%s\", \"filters\": \"%s\", \"typesize\": %d, "
                   "\"file_offset\": %lld, \"checksums\": %s}",
                   n ? ", " : "", (unsigned long long)off, (int)nbytes, (int)lay->info.cbytes,
                   (int)lay->info.blocksize, special, filters, (int)lay->info.typesize,
                   (long long)at, summed ? "true" : "false");
        else
            printf("chunk.%lld: offset %llu, nbytes %d, cbytes %d, blocksize %d, special %s, "
                   "filters %s, typesize %d, stored at %lld, checksums %s\n", (long long)n,
                   (unsigned long long)off, (int)nbytes, (int)lay->info.cbytes,
                   (int)lay->info.blocksize, special, filters, (int)lay->info.typesize,
                   (long long)at, summed ? "yes" : "no");
    }
    return 0;
}

static double ratio(const b2f_stat *st)
{
    return st->cbytes > 0 ? (double)st->nbytes / (double)st->cbytes : 0.0;
}

/* The array an N-dimensional frame holds (its b2nd metalayer): one line a property, or
 * a "b2nd" object in JSON. Nothing for a frame without one. */
static void show_nd(const bt_input *in, int json)
{
    static const char *const props[] = {"shape", "chunkshape", "blockshape", "dtype"};
    b2f_ndinfo nd;
    char err[160] = "", text[300];
    if (!in->frame)
        return;
    int rc = b2f_nd_of(in->frame, &nd, err, sizeof err);
    if (rc == B2F_ENOTFOUND)
        return;
    if (rc < 0) {
        bt_error(in->path, "b2nd metalayer: %s", err[0] ? err : b2f_strerror(rc));
        return;
    }
    if (json)
        fputs(", \"b2nd\": {", stdout);
    for (int k = 0; k < 4; k++) {
        if (b2f_nd_format(&nd, k, text, sizeof text) < 0)
            continue;
        if (json) {
            printf("%s\"%s\": ", k ? ", " : "", props[k]);
            put_json_string(text, strlen(text));
        } else {
            printf("b2nd.%s: %s\n", props[k], text);
        }
    }
    if (json)
        putchar('}');
}

static int info_text(const bt_input *in, int chunks)
{
    summary s;
    summarize(in, &s);
    const b2f_stat *st = &s.st;
    printf("file: %s\n", in->path);
    printf("kind: %s\n", kind_name(st->kind));
    printf("format_version: %d\n", st->frame_version);
    printf("codec: %s\n", s.codec);
    if (st->clevel >= 0)
        printf("clevel: %d\n", st->clevel);
    printf("filters: %s\n", s.filters);
    printf("typesize: %d\n", st->typesize);
    if (st->chunksize > 0)
        printf("chunksize: %d\n", (int)st->chunksize);
    else
        printf("chunksize: variable\n");
    printf("blocksize: %d\n", (int)st->blocksize);
    if (st->vlblocks)
        printf("blocks: variable-length (each chunk's blocks have their own sizes)\n");
    printf("splitmode: %s\n", split_name(st->splitmode));
    printf("nchunks: %lld\n", (long long)st->nchunks);
    printf("special_chunks: %lld\n", (long long)s.nspecial);
    printf("nbytes: %lld\n", (long long)st->nbytes);
    printf("cbytes: %lld\n", (long long)st->cbytes);
    printf("file_len: %lld\n", (long long)st->file_len);
    printf("ratio: %.2f\n", ratio(st));
    if (st->kind == B2F_KIND_FRAME) {
        printf("dead_bytes: %lld\n", (long long)s.dead);
        printf("metalayers: %d\n", st->nmeta);
        printf("vlmetalayers: %d\n", st->nvlmeta);
        b2f_integrity ig;
        b2f_integrity_get(in->frame, &ig);
        printf("checksums: %lld of %lld stored chunks\n", (long long)ig.chunks_summed,
               (long long)ig.chunks_stored);
        printf("fingerprint: %s\n", ig.sealed == B2F_SEALED_WHOLE ? "yes (the whole frame)"
               : ig.sealed ? "yes (header, index and trailer)" : "no");
    }
    show_nd(in, 0);
    if (bt_list_meta(in) < 0 || (chunks && show_chunks(in, 0) < 0))
        return BT_FAIL;
    return BT_OK;
}

static int info_json(const bt_input *in, int chunks)
{
    summary s;
    summarize(in, &s);
    const b2f_stat *st = &s.st;
    fputs("{\"file\": ", stdout);
    put_json_string(in->path, strlen(in->path));
    printf(", \"kind\": \"%s\", \"format_version\": %d", kind_name(st->kind), st->frame_version);
    printf(", \"codec\": \"%s\"", s.codec);
    if (st->clevel >= 0)
        printf(", \"clevel\": %d", st->clevel);
    printf(", \"filters\": \"%s\", \"typesize\": %d, \"chunksize\": %d, \"blocksize\": %d", s.filters,
           st->typesize, (int)st->chunksize, (int)st->blocksize);
    printf(", \"vlblocks\": %s", st->vlblocks ? "true" : "false");
    printf(", \"splitmode\": \"%s\", \"nchunks\": %lld, \"special_chunks\": %lld", split_name(st->splitmode),
           (long long)st->nchunks, (long long)s.nspecial);
    printf(", \"nbytes\": %lld, \"cbytes\": %lld, \"file_len\": %lld, \"ratio\": %.4f",
           (long long)st->nbytes, (long long)st->cbytes, (long long)st->file_len, ratio(st));
    if (st->kind == B2F_KIND_FRAME) {
        b2f_integrity ig;
        b2f_integrity_get(in->frame, &ig);
        printf(", \"dead_bytes\": %lld", (long long)s.dead);
        printf(", \"checksums\": {\"chunks_stored\": %lld, \"chunks_summed\": %lld, "
               "\"fingerprint\": %s}", (long long)ig.chunks_stored, (long long)ig.chunks_summed,
               ig.sealed ? "true" : "false");
    }
    show_nd(in, 1);
    fputs(", \"metalayers\": [", stdout);
    int rc = bt_each_meta(in, 0, show_json_meta);
    fputs("], \"vlmetalayers\": [", stdout);
    if (rc == 0)
        rc = bt_each_meta(in, 1, show_json_meta);
    if (rc == 0 && chunks) {
        fputs("], \"chunks\": [", stdout);
        rc = show_chunks(in, 1);
    }
    puts("]}");
    return rc < 0 ? BT_FAIL : BT_OK;
}

int bt_cmd_info(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                              {"chunks", no_argument, NULL, 'c'},
                                              {"help", no_argument, NULL, 'h'},
                                              {NULL, 0, NULL, 0}};
    int json = 0, chunks = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "jch", longopts, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else if (c == 'c')
            chunks = 1;
        else
            return bt_usage(info_usage, c == 'h' ? BT_OK : BT_USAGE);
    }
    if (optind >= argc) {
        bt_error(NULL, "info: no FILE given");
        return bt_usage(info_usage, BT_USAGE);
    }
    int status = BT_OK;
    for (int i = optind; i < argc; i++) {
        bt_input in;
        if (bt_open_input(&in, argv[i], B2F_RDONLY, 1) != BT_OK) {
            status = BT_FAIL;
            continue;
        }
        if (i > optind && !json)
            putchar('\n');
        if ((json ? info_json(&in, chunks) : info_text(&in, chunks)) != BT_OK)
            status = BT_FAIL;
        bt_close_input(&in);
    }
    return status;
}
