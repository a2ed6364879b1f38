#!/bin/bash
# Reading ahead across files (fs/prefetch): names looked up in a directory in the order
# its last listing gave them have the files after them read ahead (in the page cache of
# BACKING before anything asks for them), a window ahead; names looked up out of that
# order read nothing ahead, nor do any with prefetch=off; in a directory found in the page
# cache a refill looks at one file, until one is missing. BACKING is an ext4 in a loop
# device, so that its files can be put out of the page cache (sync, then
# POSIX_FADV_DONTNEED) and looked for in it (mincore, which reads nothing in). The files
# are small plain files (random bytes), which nothing else reads before they are opened:
# a listing with attributes (READDIRPLUS) opens frames, not plain files. Then the probe
# without cachestat (tests/fs/nosyscall.so), and BACKING on squashfs and on FUSE.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
# new files made frames at their create (not written plain first, new_plain): this suite
# looks at frames as they are written
B2FS_SUITE_OPTS=new_plain=off
need_fuse
backing_on_ext4

# pages OP DIR NAMES...: evict (the files out of the page cache) or count (how many of
# them have their first page, or the page at byte $PAGE_AT, in it: mincore, which reads
# nothing in, as a read would)
pages() {
    python3 - "$@" <<'PY'
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
op, d, names = sys.argv[1], sys.argv[2], sys.argv[3:]
n = 0
for name in names:
    fd = os.open(os.path.join(d, name), os.O_RDONLY)
    if op == 'evict':
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    else:
        addr = libc.mmap(None, mmap.PAGESIZE, mmap.PROT_READ, mmap.MAP_SHARED, fd,
                         int(os.environ.get('PAGE_AT', '0')))
        vec = ctypes.create_string_buffer(1)
        if addr in (None, ctypes.c_void_p(-1).value) or \
                libc.mincore(addr, mmap.PAGESIZE, vec) != 0:
            sys.exit("mmap or mincore: " + os.strerror(ctypes.get_errno()))
        n += vec.raw[0] & 1
        libc.munmap(addr, mmap.PAGESIZE)
    os.close(fd)
print(n)
PY
}
# names PREFIX FROM TO: PREFIX00 .. the names of entries FROM to TO
names() { for i in $(seq "$2" "$3"); do printf '%s%02d ' "$1" "$i"; done; }
# cached_soon DIR COUNT NAMES...: COUNT of them are in the page cache within 3 s
cached_soon() {
    local d=$1 want=$2; shift 2
    for _ in $(seq 1 30); do
        [ "$(pages count "$d" "$@")" -ge "$want" ] && return 0
        sleep 0.1
    done
    return 1
}

mount_b2fs || { fail "mount"; finish; exit 1; }
mkdir "$MNT/inorder" "$MNT/shuffled" "$MNT/opened" "$MNT/frames"
for i in $(seq -w 0 59); do
    head -c 2000 /dev/urandom >"$MNT/inorder/p$i"
    head -c 2000 /dev/urandom >"$MNT/shuffled/r$i"
    head -c 2000 /dev/urandom >"$MNT/opened/o$i"
done
# frames of about 150 KB (base64 text): opening one reads its two ends, not its middle
for i in 0 1 2; do head -c 150000 /dev/urandom | base64 >"$MNT/frames/f$i"; done
check "60 small files of random bytes made plain files in each directory" \
    [ "$(ls "$BACK/inorder" | grep -c '^p[0-9]*$')" = 60 -a "$(ls "$BACK/opened" | grep -c '^o[0-9]*$')" = 60 ]
unmount_b2fs
frame_sizes=$(stat -c %s "$BACK"/frames/f?.b2frame | tr '\n' ' ')
check "(the three frames are between 100 and 250 KB: $frame_sizes)" \
    bash -c 'for s in $1; do [ "$s" -gt 100000 ] && [ "$s" -lt 250000 ] || exit 1; done' bash "$frame_sizes"
# evict_all: every file of the four directories out of the page cache
evict_all() {
    sync
    pages evict "$BACK/inorder" $(names p 0 59) >/dev/null
    pages evict "$BACK/shuffled" $(names r 0 59) >/dev/null
    pages evict "$BACK/opened" $(names o 0 59) >/dev/null
    pages evict "$BACK/frames" f0.b2frame f1.b2frame f2.b2frame >/dev/null
}
evict_all
check "(none of them is in the page cache)" \
    [ "$(pages count "$BACK/inorder" $(names p 0 59))" = 0 -a "$(pages count "$BACK/shuffled" $(names r 0 59))" = 0 -a "$(pages count "$BACK/opened" $(names o 0 59))" = 0 ]

mount_b2fs || { fail "mount again"; finish; exit 1; }
ls "$MNT/inorder" "$MNT/shuffled" >/dev/null
sleep 1.2   # the entries the listing gave expire: each stat below is a LOOKUP
check "(a listing reads none of them)" [ "$(pages count "$BACK/inorder" $(names p 0 59))" = 0 ]

# in order: p00, p01, p02 looked up
for n in $(names p 0 2); do stat "$MNT/inorder/$n" >/dev/null; done
# (counted with a little slack: the page cache may let a page go)
check "names looked up in listing order: the files after them are read ahead (p03 to p18)" \
    cached_soon "$BACK/inorder" 14 $(names p 3 18)
cached_soon "$BACK/inorder" 1 p32; sleep 0.3   # the window's last one, and a moment more
check "... but not the whole directory (p33 to p59 are not)" \
    [ "$(pages count "$BACK/inorder" $(names p 33 59))" = 0 ]
# going on in order moves the window
for n in $(names p 3 30); do stat "$MNT/inorder/$n" >/dev/null; done
check "... going on in order reads further ahead (p36 to p49)" \
    cached_soon "$BACK/inorder" 12 $(names p 36 49)
cached_soon "$BACK/inorder" 1 p49; sleep 0.3
check "... a window ahead, not to the end (p50 to p59 are not)" \
    [ "$(pages count "$BACK/inorder" $(names p 50 59))" = 0 ]

# out of order: r30, then r05, then r17
for n in r30 r05 r17; do stat "$MNT/shuffled/$n" >/dev/null; done
sleep 1
check "names looked up out of listing order: nothing is read ahead" \
    [ "$(pages count "$BACK/shuffled" $(names r 0 59))" = 0 ]

# files opened by names a listing with attributes gave: no LOOKUP, the OPEN counts
ls -l "$MNT/opened" >/dev/null
cat "$MNT/opened/o00" "$MNT/opened/o01" "$MNT/opened/o02" >/dev/null
check "names opened in listing order right after it: the files after them are read ahead (o03 to o18)" \
    cached_soon "$BACK/opened" 14 $(names o 3 18)

# a listing with attributes opens each frame for its size: it reads them ahead whole first
ls -l "$MNT/frames" >/dev/null
check "a listing with attributes reads its frames ahead whole (the page at 72 KiB of each)" \
    env PAGE_AT=73728 bash -c '. /dev/stdin; cached_soon "$1" 3 f0.b2frame f1.b2frame f2.b2frame' \
    bash "$BACK/frames" < <(declare -f pages cached_soon)

check "the files read back" cmp <(cat "$BACK"/inorder/* "$BACK"/opened/*) <(cat "$MNT"/inorder/* "$MNT"/opened/*)
check "... and the frames" cmp <(base64 -d <(cat "$MNT"/frames/f?) | wc -c) <(echo 450000)

# listings replaced while files are read ahead (12 directories, 8 kept), for
# ThreadSanitizer in its build
for d in $(seq 1 12); do
    mkdir "$MNT/many$d"
    for i in $(seq -w 0 39); do echo "$d $i" >"$MNT/many$d/m$i"; done
done
sleep 1.2
for round in 1 2 3; do
    for d in $(seq 1 12); do ls "$MNT/many$d" >/dev/null; done &
    lister=$!
    for d in $(seq 1 12); do cat "$MNT/many$d"/* >/dev/null; done
    wait "$lister"
done
check "files read while listings are replaced read back" \
    bash -c 'for d in $(seq 1 12); do for i in $(seq -w 0 39); do [ "$(cat "$1/many$d/m$i")" = "$d $i" ] || exit 1; done; done' bash "$MNT"

# a directory found in the page cache: once 8 files read ahead in a row were there
# already, a refill looks only at the last file of its window; one found missing brings
# back the whole window. w00 to w49 in the page cache, w50 to w99 not.
mkdir "$MNT/warm"
for i in $(seq -w 0 99); do head -c 2000 /dev/urandom >"$MNT/warm/w$i"; done
sync
pages evict "$BACK/warm" $(names w 0 99) >/dev/null
cat $(for n in $(names w 0 49); do echo "$BACK/warm/$n"; done) >/dev/null
check "(w00 to w49 in the page cache, none of w50 to w99)" \
    [ "$(pages count "$BACK/warm" $(names w 0 49))" = 50 -a "$(pages count "$BACK/warm" $(names w 50 99))" = 0 ]
ls "$MNT/warm" >/dev/null
sleep 1.2
for n in $(names w 0 2); do stat "$MNT/warm/$n" >/dev/null; done
sleep 0.5   # the thread finds w03 to w34 there
for n in $(names w 3 34); do stat "$MNT/warm/$n" >/dev/null; done
# (the refills: at w00, w01 to w32, not warm; at w17, only w49; at w34, only w66)
check "found in the page cache, a refill looks at the last file of its window (w66)" \
    cached_soon "$BACK/warm" 1 w66
sleep 0.3
check "... and passes the others by (w50 to w65 not read ahead)" \
    [ "$(pages count "$BACK/warm" $(names w 50 65))" = 0 ]
for n in $(names w 35 51); do stat "$MNT/warm/$n" >/dev/null; done
check "... until one was missing: then the whole window again (w67 to w82)" \
    cached_soon "$BACK/warm" 14 $(names w 67 82)

# a kernel without cachestat (tests/fs/nosyscall.so refuses it): the probe falls back to a
# one-byte RWF_NOWAIT read, which ext4 answers, and names looked up in order still read
# the next files ahead
SHIM="$top_builddir/tests/fs/nosyscall.so"
if [ -f "$SHIM" ]; then
    unmount_b2fs
    LD_PRELOAD=$SHIM NOSYSCALL=cachestat NOSYSCALL_MARK="$WORK/no-cachestat" mount_b2fs ||
        { fail "a mount without cachestat"; finish; exit 1; }
    evict_all
    ls "$MNT/inorder" >/dev/null
    sleep 1.2
    for n in $(names p 0 2); do stat "$MNT/inorder/$n" >/dev/null; done
    check "without cachestat (RWF_NOWAIT probe): names looked up in order read the next files ahead (p03 to p18)" \
        cached_soon "$BACK/inorder" 14 $(names p 3 18)
    check "... the preload refused cachestat (the fallback ran)" [ -e "$WORK/no-cachestat" ]
    check "... the files read back" cmp <(cat "$BACK"/inorder/*) <(cat "$MNT"/inorder/*)
else
    fail "tests/fs/nosyscall.so is not built: the probe without cachestat not tested"
fi

# prefetch=off: the same lookups in order read nothing ahead
remount_b2fs -o prefetch=off || { fail "mount with prefetch=off"; finish; exit 1; }
evict_all
ls "$MNT/inorder" >/dev/null
sleep 1.2
for n in $(names p 0 2); do stat "$MNT/inorder/$n" >/dev/null; done
sleep 1
check "prefetch=off: names looked up in listing order read nothing ahead" \
    [ "$(pages count "$BACK/inorder" $(names p 0 59))" = 0 ]
ls -l "$MNT/frames" >/dev/null
sleep 0.5
check "prefetch=off: a listing with attributes reads no frame ahead" \
    [ "$(PAGE_AT=73728 pages count "$BACK/frames" f0.b2frame f1.b2frame f2.b2frame)" = 0 ]
# has_cachestat FILE: the kernel has cachestat(2) (Linux 6.5)
has_cachestat() {
    python3 - "$1" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[1], os.O_RDONLY)
rng, out = (ctypes.c_uint64 * 2)(0, 1), (ctypes.c_uint64 * 5)()
r = libc.syscall(451, fd, rng, out, 0)
sys.exit(0 if r == 0 else 1)
PY
}
# outer_mount DIR [OPTIONS]: a second, read-only mount with DIR as its BACKING, at $WORK/outer
outer_mount() {
    local dir=$1
    shift
    mkdir -p "$WORK/outer"
    "$B2FS" -f -o ro "$@" "$dir" "$WORK/outer" 2>>"$WORK/b2fs.log" &
    outer=$!
    for i in $(seq 1 100); do grep -q " $WORK/outer fuse.b2fs " /proc/mounts && break; sleep 0.05; done
}
# outer_walk: its listing, then s00 to s02 looked up in order
outer_walk() {
    ls "$WORK/outer" >/dev/null
    sleep 1.2
    for n in $(names s 0 2); do stat "$WORK/outer/$n" >/dev/null; done
}
outer_unmount() {
    fusermount3 -u "$WORK/outer" 2>/dev/null || fusermount3 -uz "$WORK/outer"
    wait "$outer" 2>/dev/null
}
# a BACKING on a file system without RWF_NOWAIT (squashfs, mounted read only from an
# image made here): with cachestat the files are seen missing and read ahead; on a kernel
# without it they cannot be told from cached ones, and nothing is read ahead
if command -v mksquashfs >/dev/null; then
    mkdir -p "$WORK/sqsrc" "$WORK/sq"
    for i in $(seq -w 0 59); do head -c 20000 /dev/urandom >"$WORK/sqsrc/s$i"; done
    mksquashfs "$WORK/sqsrc" "$WORK/sq.img" -quiet -noappend >/dev/null 2>&1 &&
        mount -o loop,ro "$WORK/sq.img" "$WORK/sq"
    check "(a squashfs image mounted)" mountpoint -q "$WORK/sq"
    outer_mount "$WORK/sq"
    check "(b2fs mounted over it)" grep -q " $WORK/outer fuse.b2fs " /proc/mounts
    check "(none of its files in the page cache)" [ "$(pages count "$WORK/sq" $(names s 0 59))" = 0 ]
    outer_walk
    sq_cachestat=0
    has_cachestat "$WORK/sq/s00" && sq_cachestat=1
    if [ $sq_cachestat = 1 ]; then
        check "BACKING on squashfs (no RWF_NOWAIT), asked with cachestat: the next files are read ahead (s03 to s18)" \
            cached_soon "$WORK/sq" 14 $(names s 3 18)
    else
        sleep 1
        check "BACKING on squashfs (no RWF_NOWAIT), a kernel without cachestat: nothing read ahead" \
            [ "$(pages count "$WORK/sq" $(names s 3 40))" = 0 ]
    fi
    check "... the files read back" cmp <(cat "$WORK"/sqsrc/*) <(cat "$WORK"/outer/*)
    outer_unmount
    if [ -f "$SHIM" ] && [ $sq_cachestat = 1 ]; then
        # the same on this kernel with cachestat refused: squashfs does not answer the
        # RWF_NOWAIT probe, its files count as cached, and nothing is read ahead
        umount "$WORK/sq" && mount -o loop,ro "$WORK/sq.img" "$WORK/sq"
        rm -f "$WORK/no-cachestat"
        LD_PRELOAD=$SHIM NOSYSCALL=cachestat NOSYSCALL_MARK="$WORK/no-cachestat" outer_mount "$WORK/sq"
        check "(none of its files in the page cache again)" [ "$(pages count "$WORK/sq" $(names s 0 59))" = 0 ]
        outer_walk
        sleep 1
        check "BACKING on squashfs, cachestat refused: nothing read ahead (s03 to s40)" \
            [ "$(pages count "$WORK/sq" $(names s 3 40))" = 0 ]
        check "... the preload refused cachestat" [ -e "$WORK/no-cachestat" ]
        outer_unmount
    fi
else
    fail "mksquashfs is not installed (squashfs-tools): a BACKING without RWF_NOWAIT not tested"
fi

# a BACKING on a FUSE file system (this mount, prefetch=off; a second one over it, read
# only: this one has no OFD locks): off by default there; with prefetch=on the files
# opened to be read ahead through it reach this mount's BACKING (a plain file's checksum
# is checked at its open), which shows in the page cache of the ext4 below
mkdir "$MNT/stack"
for i in $(seq -w 0 59); do head -c 2000 /dev/urandom >"$MNT/stack/s$i"; done
sync
pages evict "$BACK/stack" $(names s 0 59) >/dev/null
check "(none of them in the page cache)" [ "$(pages count "$BACK/stack" $(names s 0 59))" = 0 ]
outer_mount "$MNT/stack"
outer_walk
sleep 1
check "BACKING on FUSE: names looked up in order read nothing ahead by default" \
    [ "$(pages count "$BACK/stack" $(names s 3 40))" = 0 ]
outer_unmount
outer_mount "$MNT/stack" -o prefetch=on
outer_walk
check "... with prefetch=on the next files are (s03 to s18)" \
    cached_soon "$BACK/stack" 14 $(names s 3 18)
outer_unmount
check "--help names the option" grep -q "prefetch=on|off" <("$B2FS" --help 2>&1)
check "the daemon logged no failure and no ThreadSanitizer report" \
    not grep -Eq "failed|ThreadSanitizer" "$WORK/b2fs.log"
finish
