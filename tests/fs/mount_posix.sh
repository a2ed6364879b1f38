#!/bin/bash
# POSIX calls that a passthrough serves, on a mount: FIFOs, sockets and device nodes;
# chmod and chown of every file type; inode numbers that hard links share and that
# readdir, stat and a remount agree on; O_APPEND on a frame; access times that b2fs's
# own reads of a frame leave alone; hard-linked frames never split by compaction, and
# compacted in their own files; EFBIG for a size past what a frame can index; the owner
# and group of new entries, in a set-group-ID directory too.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
need_fuse

mount_b2fs -o chunksize=64K || { fail "mount"; finish; exit 1; }
cd "$MNT" || exit 1

check "mkfifo makes a FIFO" mkfifo fifo
check "  shown as a FIFO" test -p fifo
check "  and a FIFO in BACKING" test -p "$BACK/fifo"
check "mknod makes a character device" mknod null c 1 3
check "  shown as one, with its numbers" [ "$(stat -c %t:%T null)" = 1:3 ]
check "mknod makes a block device" mknod blk b 7 200
check "  shown as one" test -b blk
check "a UNIX socket can be bound" /usr/bin/python3 -c \
    'import socket; s = socket.socket(socket.AF_UNIX); s.bind("sock")'
check "  and shows as a socket" test -S sock
for f in fifo null blk sock; do
    check "chmod of $f" chmod 0604 "$f"
    check "  mode shown" [ "$(stat -c %a "$f")" = 604 ]
    check "chown of $f" chown 12:34 "$f"
    check "  owner shown" [ "$(stat -c %u:%g "$f")" = 12:34 ]
done
ln -s fifo link
check "chown of a symlink itself (lchown)" chown -h 5:6 link
check "  owner shown" [ "$(stat -c %u:%g link)" = 5:6 ]
check "  the target kept its owner" [ "$(stat -c %u:%g fifo)" = 12:34 ]

# a new entry of a set-group-ID directory takes the directory's group, and a new directory
# the bit too, as on any Linux file system
mkdir sgid && chgrp 4321 sgid && chmod 2775 sgid
echo x >sgid/frame
echo x >"sgid/$(printf 'l%.0s' $(seq 250))"
mkdir sgid/dir
ln -s frame sgid/link
mkfifo sgid/fifo
for f in frame "$(printf 'l%.0s' $(seq 250))" dir link fifo; do
    check "a new ${f:0:9} in a set-group-ID directory takes its group" \
        [ "$(stat -c %u:%g "sgid/$f")" = "$(id -u):4321" ]
done
check "  and a new directory the set-group-ID bit" test -g sgid/dir
check "  a new file outside it the creator's group" sh -c \
    'echo x >plaingrp && [ "$(stat -c %g plaingrp)" = "$(id -g)" ]'

echo hello >a
check "a hard link to a frame" ln a b
check "  both names show one inode number" [ "$(stat -c %i a)" = "$(stat -c %i b)" ]
check "  and a link count of 2" [ "$(stat -c %h b)" = 2 ]
check "  readdir shows the same inode number" [ "$(ls -i a | awk '{print $1}')" = "$(stat -c %i a)" ]
ino=$(stat -c %i a)
check "rename of a link keeps the inode number" mv b c
check "  " [ "$(stat -c %i c)" = "$ino" ]
mkfifo p2
check "hard link to a FIFO" ln p2 p3
check "  one inode number" [ "$(stat -c %i p2)" = "$(stat -c %i p3)" ]

check "O_APPEND on a frame writes at its end" /usr/bin/python3 - <<'PY'
import os
fd = os.open("app", os.O_CREAT | os.O_WRONLY, 0o644)
os.pwrite(fd, b"0123456789", 0)
other = os.open("app", os.O_WRONLY | os.O_APPEND)
os.write(other, b"abc")
os.pwrite(fd, b"XY", 20)          # the file grows under the appender's feet
os.write(other, b"def")
os.close(fd); os.close(other)
want = b"0123456789abc" + bytes(7) + b"XYdef"
got = open("app", "rb").read()
raise SystemExit(0 if got == want else "got %r" % got)
PY

echo d >ra
ln -s target rb
check "rename of a frame over a symlink" mv -T ra rb
check "  the frame shows there" [ "$(cat rb)" = d ]
check "  and moved on, leaves nothing behind" sh -c 'mv rb rc && [ ! -e rb ] && [ ! -L rb ]'
check "  (nothing hidden in BACKING either)" [ ! -L "$BACK/rb" ]

check "renameat2 with RENAME_WHITEOUT is refused (EINVAL), not a plain rename" /usr/bin/python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
open("wo1", "w").write("x")
r = libc.renameat2(-100, b"wo1", -100, b"wo2", 4)   # AT_FDCWD, RENAME_WHITEOUT
raise SystemExit(0 if r == -1 and ctypes.get_errno() == 22 and os.path.exists("wo1") else "r=%d errno=%d" % (r, ctypes.get_errno()))'
check "utimensat: an atime older than the mtime is kept" /usr/bin/python3 -c '
import os
open("ut", "w").write("x")
os.utime("ut", (1900000000, 1950000000))
st = os.lstat("ut")
raise SystemExit(0 if (st.st_atime, st.st_mtime) == (1900000000, 1950000000) else str(st))'
check "a write shows in mtime and ctime before it is committed" /usr/bin/python3 -c '
import os, time
open("mt", "w").write("x")
os.utime("mt", (1000000000, 1000000000))
fd = os.open("mt", os.O_WRONLY)
os.write(fd, b"more")
st = os.fstat(fd)
os.close(fd)
raise SystemExit(0 if st.st_mtime > time.time() - 60 and st.st_ctime > time.time() - 60 else str(st))'

check "fallocate zeroes a range of a frame, and extends it" /usr/bin/python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
fd = os.open("zr", os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, b"a" * 300000)
ZERO_RANGE, KEEP_SIZE = 0x10, 0x1
ok = libc.fallocate(fd, ZERO_RANGE | KEEP_SIZE, 10, 20) == 0 and os.fstat(fd).st_size == 300000
ok = ok and libc.fallocate(fd, ZERO_RANGE, 1000, 500000) == 0 and os.fstat(fd).st_size == 501000
d = os.pread(fd, 600000, 0)
ok = ok and d == b"a" * 10 + bytes(20) + b"a" * 970 + bytes(500000)
raise SystemExit(0 if ok else "fallocate zero range: %d %r" % (ctypes.get_errno(), d[:40]))'

# (a file of 4,096 bytes that compresses: a frame, or a new file written plain until it
# is made one, which keeps a frame's limits meanwhile; not a plain file b2fs keeps, whose
# limits would be BACKING's)
check "a size past what a frame indexes (2^24 chunks: 1 TiB at 64 KiB) is refused with EFBIG at once" \
    /usr/bin/python3 -c '
import errno, os
fd = os.open("huge", os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, b"x" * 4096)
def refused(call):
    try:
        call()
    except OSError as e:
        return e.errno == errno.EFBIG
    return False
ok = refused(lambda: os.ftruncate(fd, (1 << 40) + 1)) and refused(lambda: os.pwrite(fd, b"y", 1 << 40))
ok = ok and os.fstat(fd).st_size == 4096
os.close(fd)
raise SystemExit(0 if ok else "not refused")'
check "  a frame in BACKING, or the plain file to be made one (new_plain)" \
    bash -c '[ -f "$1.b2frame" ] || getfattr -n user.b2fs.stored "$1" >/dev/null 2>&1' bash "$BACK/huge"
check "  truncate(1) by name too" not truncate -s 1100G huge
check "  and the file keeps its size" [ "$(stat -c %s huge)" = 4096 ]

long=$(printf 'n%.0s' $(seq 255))
check "a new file with a 255-byte name" sh -c "echo hello >$long"
check "  reads back" [ "$(cat "$long")" = hello ]
check "  is a plain file in BACKING (no room for the suffix)" test -f "$BACK/$long"
check "  renames to a short name and back" sh -c "mv $long short && mv short $long && [ -f $long ]"

seq 100000 >t
touch -a -d "2001-02-03 04:05:06" t
touch -m -d "2002-03-04 05:06:07" t
atime=$(stat -c %X t) mtime=$(stat -c %Y t)
cd /
remount_b2fs -o chunksize=64K || { fail "remount"; finish; exit 1; }
cd "$MNT" || exit 1
check "times set by utimensat survive a remount (atime)" [ "$(stat -c %X t)" = "$atime" ]
check "  (mtime)" [ "$(stat -c %Y t)" = "$mtime" ]
check "inode numbers survive a remount" [ "$(stat -c %i a)" = "$ino" ]
check "the hard link survives a remount" [ "$(stat -c %i c)" = "$ino" ]

# rewritten until most of it is dead space: a frame with one name is compacted into a new
# file (a new inode), one with two names is not (the names would split)
# rewrite FILE N: N times 1 MiB of random bytes at its start, each fsynced
rewrite() {
    /usr/bin/python3 - "$1" "$2" <<'PY'
import os, sys
for k in range(int(sys.argv[2])):
    with open(sys.argv[1], "r+b") as f:
        f.write(os.urandom(1 << 20))
        f.flush()
        os.fsync(f.fileno())
PY
}
check "a hard-linked frame rewritten many times" rewrite a 5
check "  keeps both names on one inode" [ "$(stat -c %i a)" = "$(stat -c %i c)" ]
check "  with the same contents" cmp a c
check "  and 2 links" [ "$(stat -c %h a)" = 2 ]
# a linked frame is compacted in its own file instead
cp /usr/include/stdlib.h lf
ln lf lf2
ino_lf=$(stat -c %i "$BACK/lf.b2frame")
check "a hard-linked frame rewritten 6 times with 1 MiB" rewrite lf 6
check "  is compacted in its own file: at most twice its data" \
    [ "$(stat -c %s "$BACK/lf.b2frame")" -le $((2 * (1 << 20) + 65536)) ]
check "  one inode under both names" \
    [ "$(stat -c %i "$BACK/lf.b2frame") $(stat -c %i "$BACK/lf2.b2frame")" = "$ino_lf $ino_lf" ]
check "  the same contents through both" cmp lf lf2
check "  in a valid frame" "$B2FRAME" verify -q "$BACK/lf.b2frame"

# hard links are one inode to the kernel: a change through one name shows through the
# other at once (no attribute cache per name), also for mapped pages
seq 1000 >h1
ln h1 h2
check "chmod through one name shows through the other at once" sh -c \
    'chmod 0611 h1 && [ "$(stat -c %a h2)" = 611 ]'
check "chown likewise" sh -c 'chown 3:4 h2 && [ "$(stat -c %u:%g h1)" = 3:4 ]'
check "truncate likewise" sh -c 'truncate -s 100 h1 && [ "$(stat -c %s h2)" = 100 ]'
check "a third link: the count shows through every name at once" sh -c \
    'ln h1 h3 && [ "$(stat -c %h h2)" = 3 ] && rm h3 && [ "$(stat -c %h h1)" = 2 ]'
check "a write through one name is seen by a mapping of the other" /usr/bin/python3 -c '
import mmap, os
fd = os.open("h2", os.O_RDWR)
m = mmap.mmap(fd, 100)
m[:5]
with open("h1", "r+b") as f:
    f.write(b"HELLO")
ok = m[:5] == b"HELLO"
m.close(); os.close(fd)
raise SystemExit(0 if ok else "mapping of h2 shows %r" % m[:5])'

# a file with no name left, still open: fstat, fchmod and futimens work on it
check "fstat, fchmod and futimens of an unlinked open frame and plain file" /usr/bin/python3 -c '
import os, stat
for name in ("gone", "n" * 250):
    fd = os.open(name, os.O_CREAT | os.O_RDWR, 0o644)
    os.write(fd, b"x" * 1000)
    os.unlink(name)
    st = os.fstat(fd)
    assert st.st_size == 1000 and st.st_nlink == 0, (name[:9], st)
    os.fchmod(fd, 0o600)
    assert stat.S_IMODE(os.fstat(fd).st_mode) == 0o600, name[:9]
    os.utime(fd, (1000000000, 1000000000))
    assert os.fstat(fd).st_mtime == 1000000000, name[:9]
    os.close(fd)'

# another user's new entries (allow_other): its own, in the group of a set-group-ID
# directory, in its own group elsewhere
cd /
chmod 0755 "$WORK"
remount_b2fs -o chunksize=64K,allow_other || { fail "remount with allow_other"; finish; exit 1; }
cd "$MNT" || exit 1
mkdir -m 1777 open
as_user() { setpriv --reuid 4000 --regid 4000 --clear-groups "$@"; }
for d in sgid open; do
    check "user 4000 makes a frame, a directory and a symlink in $d" as_user sh -c \
        "echo x >$d/u-frame && mkdir $d/u-dir && ln -s u-frame $d/u-link"
    want=4000:$([ $d = sgid ] && echo 4321 || echo 4000)
    for f in u-frame u-dir u-link; do
        check "  $d/$f is $want" [ "$(stat -c %u:%g "$d/$f")" = "$want" ]
    done
done

cd /
unmount_b2fs
check "the daemon logged no error" not grep -E "b2fs: .*(failed|lost)" "$WORK/b2fs.log"
finish
