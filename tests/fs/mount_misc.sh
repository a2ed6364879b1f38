#!/bin/bash
# Options, names, links and the life cycle: bad options refused with their name,
# suffix mapping and shadowing, symlinks shown but never followed out of BACKING,
# rename over a file, mmap, SIGTERM commits, mounting through mount(8) / fstab syntax.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
need_fuse

# ---- options
out=$("$B2FS" -o codec=nosuch "$BACK" "$MNT" 2>&1); rc=$?
check "unknown codec refused, naming it" refused $rc "$out" "codec.*nosuch"
out=$("$B2FS" -o clevel=12 "$BACK" "$MNT" 2>&1); rc=$?
check "bad clevel refused, naming it" refused $rc "$out" "clevel"
out=$("$B2FS" -o filters=shuffle+nope "$BACK" "$MNT" 2>&1); rc=$?
check "bad filter refused" refused $rc "$out" "filters"
out=$("$B2FS" -o chunksize=12Q "$BACK" "$MNT" 2>&1); rc=$?
check "bad size refused" refused $rc "$out" "chunksize"
out=$("$B2FS" -o frobnicate=1 "$BACK" "$MNT" 2>&1); rc=$?
check "unknown option refused, naming it" refused $rc "$out" "frobnicate"
mkdir -p "$BACK/inner"
out=$("$B2FS" "$BACK" "$BACK/inner" 2>&1); rc=$?
check "a mount point inside BACKING refused" refused $rc "$out" "inside the backing"
rmdir "$BACK/inner"
check "nothing got mounted" not grep -q " $MNT " /proc/mounts
check "--help lists the b2fs options" grep -q "cache_size" <("$B2FS" --help)
check "--version" grep -q "^b2fs " <("$B2FS" --version)
check "--version names the libraries it runs with" \
    grep -Eq "^libfuse [0-9.]+, lz4 [0-9.]+, zstd [0-9.]+, zlib [0-9.]+, xxhash [0-9.]+$" <("$B2FS" --version)
check "pipeline with + accepted" mount_b2fs -o codec=zstd,clevel=3,filters=delta+shuffle,typesize=4,chunksize=128K,blocksize=0,nthreads=2,cache_size=16M
seq 1 1000 >"$MNT/p"
check "  ... and used" [ "$(getfattr --only-values -n user.blosc2.filters "$MNT/p" 2>/dev/null)" = delta,shuffle ]
rm -f "$MNT/p"
unmount_b2fs

# ---- names
cp "$DATA/f64-zstd1-shuffle-t8-c1048576.b2frame" "$BACK/x.b2frame"
echo plain >"$BACK/x"
cp "$DATA/i32-zstd3-delta+shuffle-t4-c262144.b2frame" "$BACK/y.b2f"
cp "$DATA/bloscpack/f64-lz4-c262144-off-adler32.blp" "$BACK/z.blp"
echo text >"$BACK/notes.txt"
mkdir "$BACK/dir.b2frame"
ln -s /etc/passwd "$BACK/abs-link"
ln -s ../../../../../../etc/passwd "$BACK/rel-link"
mkdir -p "$BACK/sub"
cp "$DATA/f64-zstd1-shuffle-t8-c1048576.b2frame" "$WORK/outside.b2frame"
ln -s "$WORK/outside.b2frame" "$BACK/evil.b2frame"
mount_b2fs || { fail "mount"; finish; exit 1; }
list=$(ls "$MNT" | tr '\n' ' ')
check "listing: $list" [ "$list" = "abs-link dir.b2frame evil.b2frame notes.txt rel-link sub x y z " ]
check "x is the frame (it shadows the plain x)" [ "$(stat -c %s "$MNT/x")" = 2097152 ]
check "the plain x is left alone in BACKING" [ "$(cat "$BACK/x")" = plain ]
check "y.b2f shows as y" [ "$(stat -c %s "$MNT/y")" = 1048576 ]
check "z.blp shows as z, read only" not sh -c "echo > '$MNT/z'" 2>/dev/null
check "plain file passed through" [ "$(cat "$MNT/notes.txt")" = text ]
check "append to a plain file" sh -c "echo more >> '$MNT/notes.txt'"
check "  ... stored as is" [ "$(tail -n1 "$BACK/notes.txt")" = more ]
check "backing name with suffix not reachable directly" [ ! -e "$MNT/x.b2frame" ]
check "a directory named *.b2frame is a directory" [ -d "$MNT/dir.b2frame" ]
check "absolute symlink shown as a link" [ "$(readlink "$MNT/abs-link")" = /etc/passwd ]
check "relative symlink shown as a link" [ "$(readlink "$MNT/rel-link")" = ../../../../../../etc/passwd ]
check "a symlink named *.b2frame is shown as that link" [ "$(readlink "$MNT/evil.b2frame")" = "$WORK/outside.b2frame" ]
check "  ... and never opened as a frame" [ ! -e "$MNT/evil" ]
check "readlink of a created symlink" ln -s target "$MNT/newlink"
check "  ... kept as a symlink in BACKING" [ "$(readlink "$BACK/newlink")" = target ]

# rename and unlink
echo one >"$MNT/r1"; echo two >"$MNT/r2"
check "rename over an existing file" mv "$MNT/r1" "$MNT/r2"
check "  ... shows the moved contents" [ "$(cat "$MNT/r2")" = one -a ! -e "$MNT/r1" ]
check "  ... one backing file left" [ "$(ls "$BACK" | grep -c '^r[12]')" = 1 ]
check "rename a .b2f file keeps its suffix" mv "$MNT/y" "$MNT/y2"
check "  ... y2.b2f in BACKING" [ -f "$BACK/y2.b2f" ]
check "rename a plain file over a frame" mv "$MNT/notes.txt" "$MNT/r2"
check "  ... shows the plain file" [ "$(head -n1 "$MNT/r2")" = text ]
check "mkdir, rename a directory, rmdir" sh -c "mkdir '$MNT/d1' && mv '$MNT/d1' '$MNT/d2' && rmdir '$MNT/d2'"
check "unlink" sh -c "rm '$MNT/r2' && [ ! -e '$MNT/r2' ]"
check "chmod" sh -c "chmod 600 '$MNT/x' && [ \$(stat -c %a '$MNT/x') = 600 ]"
check "touch -d sets mtime of a frame" sh -c "touch -d '2001-02-03 04:05:06' '$MNT/x' && [ \$(stat -c %Y '$MNT/x') = \$(date -d '2001-02-03 04:05:06' +%s) ]"
check "cp -p keeps the mtime of a new file" sh -c "cp -p '$BACK/x' '$MNT/kept' && [ \$(stat -c %Y '$MNT/kept') = \$(stat -c %Y '$BACK/x') ]"

check "mmap write and read back" /usr/bin/python3 - "$MNT/mm" <<'PY'
import mmap, os, sys
p = sys.argv[1]
with open(p, "wb") as f:
    f.truncate(3 << 20)
with open(p, "r+b") as f:
    m = mmap.mmap(f.fileno(), 0)
    m[100:105] = b"hello"
    m[(2 << 20) + 7:(2 << 20) + 12] = b"world"
    m.flush()
    m.close()
os.system("sync")
with open(p, "rb") as f:
    b = f.read()
assert b[100:105] == b"hello" and b[(2 << 20) + 7:(2 << 20) + 12] == b"world", "mmap data"
assert b.count(0) == len(b) - 10
with open(p, "rb") as f:
    m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    assert m[100:105] == b"hello"
PY
check "statfs" df "$MNT"

# SIGTERM with a file still open and written: all of it in BACKING before exit (by
# default a plain file written through, to be made a frame once opened again; with
# new_plain=off a frame whose dirty chunks are committed)
sigterm_open_file() {  # NAME
    exec 7>"$MNT/$1"
    seq 1 200000 >&7
    kill -TERM "$B2FS_PID"
    wait "$B2FS_PID"; B2FS_PID=
    exec 7>&-
    fusermount3 -u "$MNT" 2>/dev/null
}
sigterm_open_file term
# (a frame where new_plain is off by default: BACKING on a network file system)
in_backing() { if [ -e "$BACK/$1.b2frame" ]; then frame_ok "$BACK/$1.b2frame"; else cmp <(seq 1 200000) "$BACK/$1"; fi; }
check "SIGTERM: the open file's bytes are in BACKING (the plain file)" in_backing term
mount_b2fs -o new_plain=off || { fail "remount"; finish; exit 1; }
check "  ... and read back through the mount" cmp <(seq 1 200000) "$MNT/term"
sigterm_open_file term2
check "with new_plain=off: SIGTERM committed the open file" frame_ok "$BACK/term2.b2frame"
mount_b2fs || { fail "remount"; finish; exit 1; }
check "  ... and its data" cmp <(seq 1 200000) "$MNT/term2"
unmount_b2fs

# temporaries left by a b2fs that died mid-copy: removed when their process is gone, no
# lock is held on them and they are a minute old; a locked or fresh one is kept
dead=$( (sh -c 'echo $$') )   # a pid that has exited
head -c 5000 /dev/urandom >"$BACK/.b2fs-tmp-$dead-r1"
head -c 5000 /dev/urandom >"$BACK/.b2fs-tmp-$dead-r2"
head -c 5000 /dev/urandom >"$BACK/.b2fs-tmp-$dead-r3"
touch -d '2 minutes ago' "$BACK/.b2fs-tmp-$dead-r1" "$BACK/.b2fs-tmp-$dead-r2"
/usr/bin/python3 -c 'import fcntl, sys, time
f = open(sys.argv[1], "r+b"); fcntl.lockf(f, fcntl.LOCK_EX); print("locked", flush=True); time.sleep(30)' \
    "$BACK/.b2fs-tmp-$dead-r2" >"$WORK/lock.out" &
lockpid=$!
for i in $(seq 50); do grep -q locked "$WORK/lock.out" 2>/dev/null && break; sleep 0.1; done
mount_b2fs || { fail "mount"; finish; exit 1; }
ls -a "$MNT" >/dev/null
check "a stale temporary (process gone, a minute old, unlocked) is removed" [ ! -e "$BACK/.b2fs-tmp-$dead-r1" ]
check "one its writer still locks is kept" [ -e "$BACK/.b2fs-tmp-$dead-r2" ]
check "a fresh one is kept" [ -e "$BACK/.b2fs-tmp-$dead-r3" ]
check "temporaries are never shown" not grep -q b2fs-tmp <(ls -a "$MNT")
kill $lockpid 2>/dev/null; wait $lockpid 2>/dev/null
ls -a "$MNT" >/dev/null
check "  ... and removed once its lock is gone" [ ! -e "$BACK/.b2fs-tmp-$dead-r2" ]
unmount_b2fs
rm -f "$BACK"/.b2fs-tmp-*

# the way /etc/fstab mounts it (BACKING MOUNTPOINT fuse.b2fs codec=zstd,clevel=3 0 0):
# mount(8) runs mount.fuse3, which runs `b2fs BACKING MOUNTPOINT -o OPTIONS`
if command -v mount.fuse3 >/dev/null && [ "$(id -u)" = 0 ]; then
    PATH="$(dirname "$B2FS"):$PATH" mount.fuse3 "$BACK" "$MNT" -t fuse.b2fs -o rw,noatime,codec=zstd,clevel=3 2>"$WORK/mount.err"
    check "mount.fuse3 BACK MNT -t fuse.b2fs -o rw,noatime,codec=zstd,clevel=3" grep -q " $MNT fuse.b2fs " /proc/mounts
    cat "$WORK/mount.err"
    seq 1 1000 >"$MNT/viafstab" 2>/dev/null
    check "  ... writes with clevel 3" [ "$(getfattr --only-values -n user.blosc2.clevel "$MNT/viafstab" 2>/dev/null)" = 3 ]
    unmount_b2fs
fi
finish
