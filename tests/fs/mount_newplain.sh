#!/bin/bash
# new_plain (on by default): a file created through the mount is written as the plain file
# NAME and made the frame NAME.b2frame once it has been idle compress_idle seconds (or at
# unmount). Checks: the tree reads right before and after; the frames are valid and
# sealed, and a small file its frame does not make smaller stays plain with its checksum,
# an empty one untouched (its ctime) until written; mode, owner, times and xattrs go with
# the file, and the directory keeps its times (cp -a); a file held open waits until it is
# closed; a sparse file's holes are not read; a file renamed first (as rsync does) becomes
# a frame under its new name, also below a renamed directory; link(2) makes a frame of the
# file first; a .npy file and a name ending in .b2frame are frames at once; unmount makes
# frames of what waits; the frame's attributes are listed, and a read of one makes the
# frame at once; a daemon killed first leaves plain files that become frames once opened
# after the next mount (new_plain on or off); on by default, off with compress_idle=0,
# where new_plain=on is refused; new_plain=off makes frames at the create. Built with
# --enable-tsan the daemon logs no report.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
need_fuse
PY=/usr/bin/python3
command -v getfattr >/dev/null || skip_all "getfattr (package attr) is not installed"

plain_here() { [ -f "$BACK/$1" ] && [ ! -e "$BACK/$1.b2frame" ]; }
frame_here() { [ -f "$BACK/$1.b2frame" ] && [ ! -e "$BACK/$1" ]; }
frames_here() { for f; do frame_here "$f" || return 1; done; }
sealed_all() { for f; do frame_sealed "$BACK/$f.b2frame" || return 1; done; }
# (but empty files: they keep the mark, untouched)
none_left() { [ -z "$(find "$BACK/$1" -type f -size +0 ! -name '*.b2frame' -exec getfattr -n user.b2fs.stored {} + 2>/dev/null)" ]; }
sum_of() { getfattr --absolute-names --only-values -n user.b2fs.xxh3 "$1" 2>/dev/null; }

mkdir -p "$WORK/src/d/sub"
for i in $(seq 1 30); do head -c $((3000 + i * 997)) /usr/include/stdlib.h >"$WORK/src/d/t$i.h"; done
cp /usr/include/stdio.h "$WORK/src/d/sub/stdio.h"
head -c 3000000 /usr/bin/bash >"$WORK/src/d/sub/prog"          # three chunks
head -c 700 /dev/urandom >"$WORK/src/d/icon.png"               # stays plain
: >"$WORK/src/d/empty"
chmod 640 "$WORK/src/d/t1.h"
touch -d "2001-02-03 04:05:06" "$WORK/src/d/t2.h" "$WORK/src/d/sub"
setfattr -n user.origin -v camera "$WORK/src/d/t3.h"

mount_b2fs -o new_plain=on,compress_idle=2 || { fail "mount"; finish; exit 1; }
cp -a "$WORK/src/d" "$MNT/d"
check "copied in: plain files in BACKING under their names" plain_here d/t5.h
marked() { getfattr -n user.b2fs.stored "$1" >/dev/null 2>&1; }
check "... each marked to be made a frame" marked "$BACK/d/t5.h"
# (listed, not read: a read of user.blosc2.* makes it a frame)
check "... hidden in the mount" not grep -q user.b2fs \
    <(python3 -c 'import os, sys; print(os.listxattr(sys.argv[1]))' "$MNT/d/t5.h" 2>&1)
check "... and the tree reads right" diff -r "$WORK/src/d" "$MNT/d"
sub_mtime=$(stat -c %Y "$MNT/d/sub")
empty_ctime=$(stat -c %z "$MNT/d/empty")
check "once idle, frames" wait_until 100 frames_here d/t1.h d/t30.h d/sub/stdio.h d/sub/prog
check "... sealed (checksums, fingerprint)" sealed_all d/t1.h d/t30.h d/sub/stdio.h d/sub/prog
check "... smaller than the data" [ "$(stat -c %s "$BACK/d/t30.h.b2frame")" -lt $((3000 + 30 * 997)) ]
check "... and no file left marked" wait_until 50 none_left d
check "the tree still reads right" diff -r "$WORK/src/d" "$MNT/d"
check "a small file its frame does not make smaller stays plain" plain_here d/icon.png
check "... with its checksum" grep -Eq '^xxh3-128:[0-9a-f]{32}$' <(sum_of "$BACK/d/icon.png")
head -c 700 /dev/urandom >"$BACK/ref700"
check "... in no more room than a plain file of its size (no block for its attributes)" \
    [ "$(stat -c %b "$BACK/d/icon.png")" -le "$(stat -c %b "$BACK/ref700")" ]
rm -f "$BACK/ref700"
check "an empty file stays plain" plain_here d/empty
check "... untouched: its ctime as after the copy" [ "$(stat -c %z "$MNT/d/empty")" = "$empty_ctime" ]
check "the mode goes with it" [ "$(stat -c %a "$MNT/d/t1.h")" = 640 ]
check "... on the frame too" [ "$(stat -c %a "$BACK/d/t1.h.b2frame")" = 640 ]
check "the time set by cp -a too" [ "$(stat -c %Y "$MNT/d/t2.h")" = "$(stat -c %Y "$WORK/src/d/t2.h")" ]
check "... on the frame" [ "$(stat -c %Y "$BACK/d/t2.h.b2frame")" = "$(stat -c %Y "$WORK/src/d/t2.h")" ]
check "an xattr too" [ "$(getfattr --only-values -n user.origin "$MNT/d/t3.h" 2>/dev/null)" = camera ]
check "the directory keeps its time" [ "$(stat -c %Y "$MNT/d/sub")" = "$sub_mtime" ]
check "... the one cp -a gave it" [ "$sub_mtime" = "$(stat -c %Y "$WORK/src/d/sub")" ]
check "the file's summary shows" [ "$(getfattr --only-values -n user.blosc2.codec "$MNT/d/t4.h" 2>/dev/null)" = zstd ]
cat "$WORK/src/d/t30.h" >"$MNT/d/empty"
check "the empty file, once written, a frame when idle" wait_until 100 frame_here d/empty
check "... which reads right" cmp "$WORK/src/d/t30.h" "$MNT/d/empty"

# held open: made a frame only once nothing has it open
$PY - "$MNT/held" "$WORK/src/d/t9.h" "$BACK/held" <<'PY' >"$WORK/held.out" &
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, open(sys.argv[2], 'rb').read())
time.sleep(4)   # twice compress_idle
print('plain' if os.path.exists(sys.argv[3]) and not os.path.exists(sys.argv[3] + '.b2frame') else 'frame')
os.close(fd)
PY
held=$!
wait $held
check "a file held open stays plain past compress_idle" [ "$(cat "$WORK/held.out")" = plain ]
check "... and is a frame after its close" wait_until 100 frame_here held
check "... which reads right" cmp "$WORK/src/d/t9.h" "$MNT/held"

# a sparse file: its holes are zero chunks, not read (only its data is)
read_by_daemon() { awk '/^rchar/ {print $2}' "/proc/$B2FS_PID/io"; }
truncate -s 4G "$MNT/sparse"
printf data | dd of="$MNT/sparse" bs=1 seek=$((2 << 30)) conv=notrunc 2>/dev/null
r0=$(read_by_daemon)
check "a sparse file of 4 GiB is a frame once idle" wait_until 200 frame_here sparse
r1=$(read_by_daemon)
check "... its holes not read (the daemon read $(((r1 - r0) >> 20)) MiB)" [ $((r1 - r0)) -lt $((64 << 20)) ]
check "... its size kept" [ "$(stat -c %s "$MNT/sparse")" = $((4 << 30)) ]
check "... and its data" [ "$(dd if="$MNT/sparse" bs=1 skip=$((2 << 30)) count=4 2>/dev/null)" = data ]
check "... in a frame of a few KiB" [ "$(stat -c %s "$BACK/sparse.b2frame")" -lt 16384 ]
# one of 100 bytes all hole: its frame is not smaller, so it stays plain with its checksum
truncate -s 100 "$MNT/hole100"
sealed_plain() { [ -n "$(sum_of "$BACK/$1")" ]; }
check "a file of 100 bytes all hole stays plain, sealed once idle" wait_until 100 sealed_plain hole100
check "... and reads (its checksum is of its zeros)" cmp <(head -c 100 /dev/zero) "$MNT/hole100"

# codec parameters set on a new file while it is plain are its own once it is a frame
($PY - "$MNT/typed" <<'PY'
import os, struct, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
os.setxattr(sys.argv[1], 'user.blosc2.typesize', b'2')
os.setxattr(sys.argv[1], 'user.blosc2.clevel', b'5')
os.write(fd, struct.pack('<200000h', *[(i * 7) % 3000 for i in range(200000)]))
# (read while its writer has it open: it stays plain, and they are answered as set)
print(b'/'.join(os.getxattr(sys.argv[1], 'user.blosc2.' + k) for k in ('typesize', 'clevel')).decode())
os.close(fd)
PY
) >"$WORK/typed.out"
param() { getfattr --only-values -n "user.blosc2.$1" "$MNT/$2" 2>/dev/null; }
check "parameters set on a new plain file read back" [ "$(cat "$WORK/typed.out")" = 2/5 ]
check "... hidden in BACKING" not grep -q blosc2 <(getfattr -d -m - "$BACK/typed" 2>/dev/null)
check "... and are the frame's once idle" wait_until 100 frame_here typed
check "... typesize 2, clevel 5" [ "$(param typesize typed)/$(param clevel typed)" = 2/5 ]
check "... not left on the frame's backing file" \
    not grep -q 'b2fs\.\(typesize\|clevel\|stored\)' <(getfattr -d -m - "$BACK/typed.b2frame" 2>/dev/null)

# renamed before it is idle, as rsync does with its temporary names
cp "$WORK/src/d/t10.h" "$MNT/.t10.h.XyZ12"
mv "$MNT/.t10.h.XyZ12" "$MNT/t10.h"
mkdir "$MNT/dir1"
cp "$WORK/src/d/t11.h" "$MNT/dir1/t11.h"
mv "$MNT/dir1" "$MNT/dir2"
check "a file renamed first is a frame under its new name" wait_until 100 frame_here t10.h
check "... which reads right" cmp "$WORK/src/d/t10.h" "$MNT/t10.h"
check "one below a renamed directory too" wait_until 100 frame_here dir2/t11.h
check "... which reads right" cmp "$WORK/src/d/t11.h" "$MNT/dir2/t11.h"

# link(2): a frame first, so that both names are the one frame
cp "$WORK/src/d/t12.h" "$MNT/a12"
ln "$MNT/a12" "$MNT/b12"
check "link: the file is a frame first" frame_here a12
same_inode() { local a; a=$(stat -c %i "$1") && [ "$a" = "$(stat -c %i "$2")" ]; }
check "... both names one frame" same_inode "$BACK/a12.b2frame" "$BACK/b12.b2frame"
check "... one inode in the mount" same_inode "$MNT/a12" "$MNT/b12"
check "... which reads right" cmp "$WORK/src/d/t12.h" "$MNT/b12"

# names that are frames at once
$PY -c "import numpy as np, sys; np.save(sys.argv[1], np.arange(1000, dtype='<f4'))" "$MNT/x.npy" 2>/dev/null
check "a .npy file is an array at its close" [ -f "$BACK/x.b2nd" ]
cp "$WORK/src/d/t13.h" "$MNT/y.b2frame"
check "a name ending in .b2frame is a frame at once" [ -f "$BACK/y.b2frame.b2frame" ]

: >"$MNT/empty2"
empty2_ctime=$(stat -c %z "$BACK/empty2")

# unmount makes frames of what waits
unmount_b2fs
check "an empty file is left untouched by the unmount too (its ctime)" \
    [ "$(stat -c %z "$BACK/empty2")" = "$empty2_ctime" ]
mount_b2fs -o new_plain=on,compress_idle=60 || { fail "mount"; finish; exit 1; }
cp "$WORK/src/d/t14.h" "$MNT/late"
check "compress_idle=60: plain meanwhile" plain_here late
# what a frame has is listed, and a read of it makes the frame at once
cp "$WORK/src/d/t17.h" "$MNT/asked"
listed() { $PY -c 'import os, sys; print(" ".join(os.listxattr(sys.argv[1])))' "$1"; }
check "a new plain file lists its frame's attributes (user.blosc2.cratio)" \
    grep -qw user.blosc2.cratio <(listed "$MNT/asked")
check "... and is still plain after the listing" plain_here asked
# (the close's release may reach the daemon a moment after cp ends: read until answered)
ratio_read() { ratio=$(param cratio asked); [ -n "$ratio" ]; }
check "a read of user.blosc2.cratio answers" wait_until 20 ratio_read
check "... made from its frame, made at once" frame_here asked
check "... which reads right" cmp "$WORK/src/d/t17.h" "$MNT/asked"
cp "$WORK/src/d/t20.h" "$MNT/dumped"
sleep 0.2   # (the close's release)
check "getfattr -d of a new plain file shows its frame's ratio at the first call" \
    grep -q '^user.blosc2.cratio=' <(getfattr -d -m user.blosc2 "$MNT/dumped" 2>&1)
unmount_b2fs
check "unmount makes it a frame" frame_here late
mount_b2fs -o new_plain=on,compress_idle=60 || { fail "mount"; finish; exit 1; }
check "... which reads right" cmp "$WORK/src/d/t14.h" "$MNT/late"

# a daemon killed first: the file stays plain, marked, and is made a frame once opened
cp "$WORK/src/d/t15.h" "$MNT/orphan"
kill -9 "$B2FS_PID"
wait "$B2FS_PID" 2>/dev/null
fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"
check "killed: the file is plain and marked" marked "$BACK/orphan"
mount_b2fs -o new_plain=off,compress_idle=1 || { fail "mount"; finish; exit 1; }
check "... which reads right after the next mount (new_plain=off)" cmp "$WORK/src/d/t15.h" "$MNT/orphan"
check "... and is a frame once opened" wait_until 100 frame_here orphan

# the default: new_plain on where compress_idle is not 0
remount_b2fs || { fail "mount"; finish; exit 1; }
cp "$WORK/src/d/t18.h" "$MNT/dflt"
check "by default: a new file is written plain" plain_here dflt
remount_b2fs -o compress_idle=0 || { fail "mount"; finish; exit 1; }
cp "$WORK/src/d/t19.h" "$MNT/idle0"
check "... but with compress_idle=0 (the default on a network file system) a frame at once" frame_here idle0

check "new_plain=on with compress_idle=0 is refused, saying why" \
    grep -q "new_plain=on needs compress_idle" <("$B2FS" -o new_plain=on,compress_idle=0 "$BACK" "$WORK/nomnt" 2>&1)

# new_plain=off: a frame at the create
remount_b2fs -o new_plain=off || { fail "mount"; finish; exit 1; }
cp "$WORK/src/d/t16.h" "$MNT/off"
check "new_plain=off: a frame at once" frame_here off
check "... which reads right" cmp "$WORK/src/d/t16.h" "$MNT/off"
unmount_b2fs

check "the daemon logged no failure and no ThreadSanitizer report" \
    not grep -Eq "WARNING|ERROR|ThreadSanitizer|cannot|failed" "$WORK/b2fs.log"
finish
