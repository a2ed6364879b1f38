#!/bin/bash
# A tree with FIFOs, symlinks, hard links, sparse files, empty files and odd modes, owners
# and times copied into the mount and back out with `tar x`, `cp -a` and `rsync -aH`
# (when installed) gives the same tree as the same command gives on the local disk: names,
# types, modes, owners, times, link structure and contents (tests/fs/tree_compare.py). (GNU
# tar, for one, archives a second name of a FIFO as a FIFO of its own, on any file system.)
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
need_fuse

src="$WORK/src"
mkdir -p "$src/d/sub" "$src/empty_dir"
seq 1 200000 >"$src/d/numbers"
printf 'x' >"$src/one_byte"
: >"$src/empty"
head -c 3000000 /dev/urandom >"$src/random"
truncate -s 20M "$src/sparse" && printf 'tail' >>"$src/sparse"
dd if=/dev/urandom of="$src/sparse" bs=4096 count=3 seek=1000 conv=notrunc status=none
ln "$src/d/numbers" "$src/d/sub/numbers_link"
ln "$src/d/numbers" "$src/numbers_link2"
ln -s d/numbers "$src/sym"
ln -s /nonexistent/target "$src/dangling"
mkfifo "$src/fifo"
ln "$src/fifo" "$src/fifo_link"
chmod 0751 "$src/d"
chmod 0600 "$src/random"
chmod 4755 "$src/one_byte"
chmod 1777 "$src/empty_dir"
chown 123:456 "$src/empty" "$src/d/sub"
chown -h 7:8 "$src/sym"
touch -h -d "2003-04-05 06:07:08" "$src/sym"
touch -d "2001-02-03 04:05:06" "$src/random" "$src/d/sub" "$src/empty_dir"

compare() {  # tree A, tree B
    /usr/bin/python3 "$top_srcdir/tests/fs/tree_compare.py" "$1" "$2"
}
roundtrip() {  # name, copy command (its destination is $1 of the command line)
    local name=$1 copy=$2
    mkdir -p "$MNT/$name" "$WORK/ref-$name" "$WORK/out-$name"
    bash -c "$copy" _ "$src" "$WORK/ref-$name" || { fail "$name: reference copy on the local disk"; return; }
    check "$name: copy in" bash -c "$copy" _ "$src" "$MNT/$name"
    # a remount: what comes out is what was committed, with fresh attributes
    (cd / && remount_b2fs) || { fail "$name: remount"; return; }
    check "$name: the tree in the mount is the reference" compare "$WORK/ref-$name" "$MNT/$name"
    check "$name: copy out" bash -c "$copy" _ "$MNT/$name" "$WORK/out-$name"
    check "$name: the tree copied out is the reference" compare "$WORK/ref-$name" "$WORK/out-$name"
}

mount_b2fs -o chunksize=256K || { fail "mount"; finish; exit 1; }
roundtrip tar 'tar -C "$1" -cf - . | tar -C "$2" -xpf -'
roundtrip cp 'cp -a "$1/." "$2"'
if command -v rsync >/dev/null; then
    roundtrip rsync 'rsync -aH "$1/" "$2/"'
else
    echo "rsync is not installed: its round trip is not run (contrib/install-deps installs it)"
fi
# what a listing says of each entry (READDIRPLUS: the kernel looks none of them up) is what
# a lookup of each name says, on a fresh mount each
attrs() {  # walk | names FILE: "path mode nlink uid gid size mtime ino" of each entry
    /usr/bin/python3 - "$MNT/cp" "$@" <<'PY'
import os, sys
top, how = sys.argv[1], sys.argv[2]
if how == "walk":
    paths = [os.path.join(r, n) for r, ds, fs in os.walk(top) for n in ds + fs]
else:
    paths = [os.path.join(top, l.split(" ", 1)[0]) for l in open(sys.argv[3])]
for p in sorted(paths):
    st = os.lstat(p)
    print(os.path.relpath(p, top), st.st_mode, st.st_nlink, st.st_uid, st.st_gid,
          st.st_size, st.st_mtime_ns, st.st_ino)
PY
}
(cd / && remount_b2fs) || fail "remount for a listing"
attrs walk >"$WORK/listed"
(cd / && remount_b2fs) || fail "remount for lookups"
attrs names "$WORK/listed" >"$WORK/looked"
check "a listing gives each entry's attributes as a lookup does ($(wc -l <"$WORK/listed") entries)" \
    [ -s "$WORK/listed" -a "$(wc -l <"$WORK/listed")" -gt 10 ]
check "... the same" cmp "$WORK/listed" "$WORK/looked"
check "regular files are stored as frames" test -f "$BACK/cp/d/numbers.b2frame"
check "the sparse file takes little room in BACKING" [ "$(du -k "$BACK/cp/sparse.b2frame" | cut -f1)" -lt 2000 ]
unmount_b2fs

# A daemon started with a soft limit of 256 open files (a login shell gives 1,024) takes
# its hard limit: every open file, idle and queued, has room, and a copy of a tree of
# hundreds of files does not fail with EMFILE.
hard=$(ulimit -Hn) soft=$(ulimit -Sn)
if [ "$hard" = unlimited ] || [ "$hard" -ge 8192 ]; then
    ulimit -Sn 256
    mount_b2fs || { fail "mount with ulimit -Sn 256"; finish; exit 1; }
    ulimit -Sn "$soft"
    check "started with a soft limit of 256 open files, the daemon takes its hard limit" \
        grep -q "^Max open files  *$hard " "/proc/$B2FS_PID/limits"
    # its table of descriptors is made large at start: a process with threads waits for an
    # RCU grace period (milliseconds) each time that table doubles
    fdsize=$(awk '/^FDSize:/ {print $2}' "/proc/$B2FS_PID/status")
    check "... and its table of file descriptors has room for 4,096 at start (FDSize $fdsize)" \
        [ "${fdsize:-0}" -ge 4096 ]
    cp -r /usr/include/linux "$MNT/linux" 2>"$WORK/cp.err"
    check "... and a copy of /usr/include/linux in succeeds ($(wc -l <"$WORK/cp.err") errors)" \
        [ ! -s "$WORK/cp.err" ]
    check "... and reads back" diff -r /usr/include/linux "$MNT/linux"
    unmount_b2fs
else
    echo "########################################################"
    echo "NOT RUN: the open-files checks (the hard limit is $hard, below 8,192)"
    echo "########################################################"
fi
# A new file is made without a name (O_TMPFILE) and then linked under its own, where
# BACKING's file system allows: no temporary name is made and renamed (in a directory of
# thousands of files that took about 1.4 times as long on ext4). inotify on BACKING sees
# each name. (Frames made at the create: new_plain=off; by default a new file is the plain
# file NAME, made by its name.)
mount_b2fs -o new_plain=off || { fail "mount"; finish; exit 1; }
mkdir "$MNT/new"
/usr/bin/python3 - "$BACK/new" "$MNT/new" >"$WORK/names" <<'PY'
import ctypes, os, sys
back, mnt = sys.argv[1:]
libc = ctypes.CDLL(None, use_errno=True)
try:   # what the daemon's probe does: an unnamed file, then linked (AT_SYMLINK_FOLLOW)
    fd = os.open(back, os.O_TMPFILE | os.O_RDWR, 0o600)
    probe = os.path.join(back, "probe").encode()
    if libc.linkat(-100, b"/proc/self/fd/%d" % fd, -100, probe, 0x400) != 0:
        raise OSError(ctypes.get_errno(), "linkat")
    os.unlink(probe)
    os.close(fd)
    print("unnamed yes")
except OSError as e:
    print("unnamed no:", e)
ino = libc.inotify_init1(os.O_NONBLOCK)
if ino < 0 or libc.inotify_add_watch(ino, back.encode(), 0x100 | 0x80) < 0:  # CREATE, MOVED_TO
    sys.exit("inotify: errno %d" % ctypes.get_errno())
for i in range(20):
    with open(os.path.join(mnt, "f%02d" % i), "w") as f:
        f.write("line %d\n" % i * 200)
buf = b""
try:
    while True:
        buf += os.read(ino, 65536)
except BlockingIOError:
    pass
off = 0
while off + 16 <= len(buf):
    n = int.from_bytes(buf[off + 12:off + 16], "little")
    print(buf[off + 16:off + 16 + n].rstrip(b"\0").decode())
    off += 16 + n
PY
made=$(grep -c '^f[0-9][0-9]\.b2frame$' "$WORK/names")
temps=$(grep -c '^\.b2fs-tmp-' "$WORK/names")
if grep -qx "unnamed yes" "$WORK/names"; then
    check "20 new files appear in BACKING under their names ($made), no temporary name made ($temps)" \
        [ "$made" -eq 20 -a "$temps" -eq 0 ]
else
    echo "########################################################"
    echo "BACKING's file system makes no unnamed files (O_TMPFILE): new files take a"
    echo "temporary name, renamed into place; checking that instead"
    echo "########################################################"
    check "20 new files appear in BACKING under their names ($made), each made under a temporary name ($temps)" \
        [ "$made" -eq 20 -a "$temps" -eq 20 ]
fi
check "... and read back" bash -c 'for i in $(seq -w 0 19); do
    [ "$(head -n 1 "$1/f$i")" = "line $((10#$i))" ] || exit 1; done' _ "$MNT/new"
check "... and no temporary name is left" [ -z "$(find "$BACK" -name '.b2fs-tmp-*')" ]
unmount_b2fs
check "the daemon logged no error" not grep -E "b2fs: .*(failed|lost)" "$WORK/b2fs.log"
finish
