/* The kernel's inodes and their names (inode.h). */
#include "fs/inode.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct inode_rec inode_rec;

/* One name of an inode: name in directory parent. */
typedef struct iname {
    inode_rec *owner;
    inode_rec *parent;      /* holds a child reference on parent */
    struct iname *sibling;  /* owner's next name, older */
    struct iname *hnext;    /* chain in the (parent, name) index */
    char name[];
} iname;

struct inode_rec {
    dev_t dev;
    ino_t ino;
    mode_t type;            /* S_IFMT bits */
    uint64_t nlookup;       /* the kernel's lookup count */
    uint64_t children;      /* inames whose parent this is */
    int indexed;            /* in the (dev, ino) index */
    unsigned nnames;
    iname *names;           /* newest first: a path is built from the newest */
    uint64_t *opens;        /* fs/ops handles open on it */
    unsigned nopens, capopens;
    inode_rec *hnext;       /* chain in the (dev, ino) index */
    inode_rec *all_prev, *all_next;
};

/* Hard links of one file seen under more names than this keep the newest ones. */
#define MAX_NAMES 16

static pthread_mutex_t inode_lock = PTHREAD_MUTEX_INITIALIZER;
/* everything below: inode_lock */
static inode_rec root = {.type = S_IFDIR};
static inode_rec *all_head;
static inode_rec **by_key;
static size_t key_buckets, key_count;
static iname **by_name;
static size_t name_buckets, name_count;
static size_t rec_count;

static inode_rec *rec_of(uint64_t id)
{
    return id == B2FS_ROOT_INODE ? &root : (inode_rec *)(uintptr_t)id;
}

static uint64_t id_of(inode_rec *r)
{
    return r == &root ? B2FS_ROOT_INODE : (uint64_t)(uintptr_t)r;
}

static size_t key_hash(dev_t dev, ino_t ino)
{
    return (size_t)(((uint64_t)ino * 0x9E3779B97F4A7C15ull) ^ (uint64_t)dev);
}

static size_t name_hash(const inode_rec *parent, const char *name)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)parent;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (size_t)h;
}

/* Doubles an index when it holds twice as many entries as buckets; keeps the old one if
 * memory is short (chains only get longer). */
static void grow_keys(void)
{
    if (key_count < 2 * key_buckets && by_key)
        return;
    size_t nb = key_buckets ? key_buckets * 2 : 1024;
    inode_rec **nt = calloc(nb, sizeof *nt);
    if (!nt)
        return;
    for (size_t b = 0; b < key_buckets; b++)
        for (inode_rec *r = by_key[b], *next; r; r = next) {
            next = r->hnext;
            size_t h = key_hash(r->dev, r->ino) % nb;
            r->hnext = nt[h];
            nt[h] = r;
        }
    free(by_key);
    by_key = nt;
    key_buckets = nb;
}

static void grow_names(void)
{
    if (name_count < 2 * name_buckets && by_name)
        return;
    size_t nb = name_buckets ? name_buckets * 2 : 1024;
    iname **nt = calloc(nb, sizeof *nt);
    if (!nt)
        return;
    for (size_t b = 0; b < name_buckets; b++)
        for (iname *e = by_name[b], *next; e; e = next) {
            next = e->hnext;
            size_t h = name_hash(e->parent, e->name) % nb;
            e->hnext = nt[h];
            nt[h] = e;
        }
    free(by_name);
    by_name = nt;
    name_buckets = nb;
}

static inode_rec *key_find(dev_t dev, ino_t ino)
{
    if (!key_buckets)
        return NULL;
    for (inode_rec *r = by_key[key_hash(dev, ino) % key_buckets]; r; r = r->hnext)
        if (r->dev == dev && r->ino == ino)
            return r;
    return NULL;
}

static void key_insert(inode_rec *r)
{
    grow_keys();
    if (!key_buckets)
        return; /* (no index: the inode is found by name only) */
    size_t h = key_hash(r->dev, r->ino) % key_buckets;
    r->hnext = by_key[h];
    by_key[h] = r;
    r->indexed = 1;
    key_count++;
}

static void key_remove(inode_rec *r)
{
    if (!r->indexed)
        return;
    inode_rec **pp = &by_key[key_hash(r->dev, r->ino) % key_buckets];
    while (*pp != r)
        pp = &(*pp)->hnext;
    *pp = r->hnext;
    r->indexed = 0;
    key_count--;
}

static iname **name_slot(const inode_rec *parent, const char *name)
{
    if (!name_buckets)
        return NULL;
    iname **pp = &by_name[name_hash(parent, name) % name_buckets];
    while (*pp && ((*pp)->parent != parent || strcmp((*pp)->name, name)))
        pp = &(*pp)->hnext;
    return pp;
}

static iname *name_find(const inode_rec *parent, const char *name)
{
    iname **pp = name_slot(parent, name);
    return pp ? *pp : NULL;
}

static void maybe_free(inode_rec *r);

/* Drops one name. With forget_key, an inode left without names leaves the (dev, ino)
 * index: its file is gone, and a new file may get its number. */
static void name_remove(iname *e, int forget_key)
{
    iname **pp = name_slot(e->parent, e->name);
    if (pp && *pp == e)
        *pp = e->hnext;
    name_count--;
    inode_rec *owner = e->owner, *parent = e->parent;
    iname **op = &owner->names;
    while (*op != e)
        op = &(*op)->sibling;
    *op = e->sibling;
    owner->nnames--;
    parent->children--;
    free(e);
    if (forget_key && !owner->nnames && owner != &root)
        key_remove(owner);
    maybe_free(parent);
    if (forget_key)
        maybe_free(owner);
}

static void maybe_free(inode_rec *r)
{
    if (r == &root || r->nlookup || r->children)
        return;
    key_remove(r);
    while (r->names)
        name_remove(r->names, 0);
    if (r->all_prev)
        r->all_prev->all_next = r->all_next;
    else
        all_head = r->all_next;
    if (r->all_next)
        r->all_next->all_prev = r->all_prev;
    rec_count--;
    free(r->opens);
    free(r);
}

/* Records name in parent as a name of r (newest). A name held by another inode moves
 * to r (the entry was replaced behind the mount's back); a directory keeps one name. */
static int name_add(inode_rec *r, inode_rec *parent, const char *name)
{
    iname *old = name_find(parent, name);
    if (old && old->owner == r) {
        if (r->names != old) { /* make it the newest */
            iname **op = &r->names;
            while (*op != old)
                op = &(*op)->sibling;
            *op = old->sibling;
            old->sibling = r->names;
            r->names = old;
        }
        return 0;
    }
    size_t len = strlen(name);
    iname *e = malloc(sizeof *e + len + 1);
    if (!e)
        return -ENOMEM;
    parent->children++; /* before the removals below, which may free an unused parent */
    if (old)
        name_remove(old, 1);
    if (r->type == S_IFDIR)
        while (r->names)
            name_remove(r->names, 0);
    if (r->nnames >= MAX_NAMES) {
        iname *last = r->names;
        while (last->sibling)
            last = last->sibling;
        name_remove(last, 0);
    }
    memcpy(e->name, name, len + 1);
    e->owner = r;
    e->parent = parent;
    e->sibling = r->names;
    r->names = e;
    r->nnames++;
    grow_names();
    iname **pp = name_slot(parent, name);
    e->hnext = *pp;
    *pp = e;
    name_count++;
    return 0;
}

void inode_table_init(void)
{
    pthread_mutex_lock(&inode_lock);
    root.nlookup = 1;
    pthread_mutex_unlock(&inode_lock);
}

void inode_table_free(void)
{
    pthread_mutex_lock(&inode_lock);
    for (size_t b = 0; b < name_buckets; b++)
        for (iname *e = by_name[b], *next; e; e = next) {
            next = e->hnext;
            free(e);
        }
    while (all_head) {
        inode_rec *r = all_head;
        all_head = r->all_next;
        free(r->opens);
        free(r);
    }
    free(by_key);
    free(by_name);
    by_key = NULL;
    by_name = NULL;
    key_buckets = key_count = name_buckets = name_count = rec_count = 0;
    root.names = NULL;
    root.nnames = 0;
    root.children = 0;
    pthread_mutex_unlock(&inode_lock);
}

int inode_path(uint64_t id, const char *name, char **path)
{
    pthread_mutex_lock(&inode_lock);
    size_t len = name ? 1 + strlen(name) : 0;
    int depth = 0, r = 0;
    inode_rec *p = rec_of(id);
    for (; p != &root; p = p->names->parent) {
        if (!p->names || ++depth > 4096) {
            r = p->names ? -ENAMETOOLONG : -ENOENT;
            break;
        }
        len += 1 + strlen(p->names->name);
    }
    char *out = r ? NULL : malloc(len + 2);
    if (!r && !out)
        r = -ENOMEM;
    if (!r) {
        size_t at = len;
        out[at] = 0;
        if (name) {
            size_t nl = strlen(name);
            at -= nl;
            memcpy(out + at, name, nl);
            out[--at] = '/';
        }
        for (p = rec_of(id); p != &root; p = p->names->parent) {
            size_t nl = strlen(p->names->name);
            at -= nl;
            memcpy(out + at, p->names->name, nl);
            out[--at] = '/';
        }
        if (!len) {
            out[0] = '/';
            out[1] = 0;
        }
        *path = out;
    }
    pthread_mutex_unlock(&inode_lock);
    return r;
}

uint64_t inode_remember(uint64_t parent, const char *name, const struct stat *st)
{
    pthread_mutex_lock(&inode_lock);
    inode_rec *r = key_find(st->st_dev, st->st_ino);
    if (r && ((r->type ^ st->st_mode) & S_IFMT)) {
        key_remove(r); /* the number was given to a file of another type */
        r = NULL;
    }
    uint64_t id = 0;
    if (!r && (r = calloc(1, sizeof *r)) != NULL) {
        r->dev = st->st_dev;
        r->ino = st->st_ino;
        r->type = st->st_mode & S_IFMT;
        key_insert(r);
        r->all_next = all_head;
        if (all_head)
            all_head->all_prev = r;
        all_head = r;
        rec_count++;
    }
    if (r) {
        r->nlookup++;
        if (name_add(r, rec_of(parent), name) == 0) {
            id = id_of(r);
        } else {
            r->nlookup--;
            maybe_free(r);
        }
    }
    pthread_mutex_unlock(&inode_lock);
    return id;
}

void inode_forget(uint64_t id, uint64_t n)
{
    if (id == B2FS_ROOT_INODE)
        return;
    pthread_mutex_lock(&inode_lock);
    inode_rec *r = rec_of(id);
    r->nlookup = n < r->nlookup ? r->nlookup - n : 0;
    maybe_free(r);
    pthread_mutex_unlock(&inode_lock);
}

void inode_name_gone(uint64_t parent, const char *name)
{
    pthread_mutex_lock(&inode_lock);
    iname *e = name_find(rec_of(parent), name);
    if (e)
        name_remove(e, 1);
    pthread_mutex_unlock(&inode_lock);
}

void inode_renamed(uint64_t parent, const char *name, uint64_t newparent, const char *newname)
{
    pthread_mutex_lock(&inode_lock);
    inode_rec *np = rec_of(newparent);
    iname *src = name_find(rec_of(parent), name);
    iname *dst = name_find(np, newname);
    if (dst && (!src || dst->owner != src->owner))
        name_remove(dst, 1);
    if (src) {
        inode_rec *owner = src->owner;
        np->children++; /* keep the new parent while the old name goes */
        name_remove(src, 0);
        if (name_add(owner, np, newname) && !owner->nnames) {
            key_remove(owner);
            maybe_free(owner);
        }
        np->children--;
        maybe_free(np);
    }
    pthread_mutex_unlock(&inode_lock);
}

void inode_rekey(dev_t dev, ino_t old, ino_t ino)
{
    pthread_mutex_lock(&inode_lock);
    inode_rec *r = key_find(dev, old);
    if (r && !key_find(dev, ino)) {
        key_remove(r);
        r->ino = ino;
        key_insert(r);
    }
    pthread_mutex_unlock(&inode_lock);
}

int inode_open_add(uint64_t id, uint64_t fh)
{
    pthread_mutex_lock(&inode_lock);
    inode_rec *r = rec_of(id);
    int ret = 0;
    if (r->nopens == r->capopens) {
        unsigned cap = r->capopens ? r->capopens * 2 : 2;
        uint64_t *o = realloc(r->opens, cap * sizeof *o);
        if (o) {
            r->opens = o;
            r->capopens = cap;
        } else {
            ret = -ENOMEM;
        }
    }
    if (!ret)
        r->opens[r->nopens++] = fh;
    pthread_mutex_unlock(&inode_lock);
    return ret;
}

void inode_open_remove(uint64_t id, uint64_t fh)
{
    pthread_mutex_lock(&inode_lock);
    inode_rec *r = rec_of(id);
    for (unsigned i = 0; i < r->nopens; i++)
        if (r->opens[i] == fh) {
            r->opens[i] = r->opens[--r->nopens];
            break;
        }
    pthread_mutex_unlock(&inode_lock);
}

int inode_open_borrow(uint64_t id, void (*hold)(uint64_t fh), uint64_t *fh)
{
    pthread_mutex_lock(&inode_lock);
    inode_rec *r = rec_of(id);
    int ret = r->nopens ? 0 : -ENOENT;
    if (!ret) {
        *fh = r->opens[0];
        hold(*fh);
    }
    pthread_mutex_unlock(&inode_lock);
    return ret;
}

size_t inode_count(void)
{
    pthread_mutex_lock(&inode_lock);
    size_t n = rec_count;
    pthread_mutex_unlock(&inode_lock);
    return n;
}
