#!/bin/bash
# Holes: truncate -s 10G costs under 1 MiB of backing space, reads back zeros, and
# SEEK_HOLE / SEEK_DATA find the zero chunks; fallocate and punching holes.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
# new files made frames at their create (not written plain first, new_plain): this suite
# looks at frames as they are written
B2FS_SUITE_OPTS=new_plain=off
need_fuse

mount_b2fs || { fail "mount"; finish; exit 1; }
check "truncate -s 10G" truncate -s 10G "$MNT/sparse"
check "ls -l shows 10 GiB" [ "$(stat -c %s "$MNT/sparse")" = $((10 << 30)) ]
sync
used=$(du -k "$BACK/sparse.b2frame" | cut -f1)
check "backing space under 1 MiB (${used} KiB)" [ "$used" -lt 1024 ]
check "reads zeros at the start, middle and end" /usr/bin/python3 - "$MNT/sparse" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
for off in (0, 12345, size // 2, size - 4096, size - 1):
    if os.pread(fd, 65536, off) != bytes(min(65536, size - off)):
        sys.exit(1)
PY
check "a data block in the middle, then SEEK_DATA / SEEK_HOLE" /usr/bin/python3 - "$MNT/sparse" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
G = 1 << 30
os.pwrite(fd, b"x" * 100, 5 * G + 10)
os.fsync(fd)
size = os.fstat(fd).st_size
assert size == 10 * G, size
d = os.lseek(fd, 0, os.SEEK_DATA)
h = os.lseek(fd, 0, os.SEEK_HOLE)
assert h == 0, ("first hole", h)
assert d <= 5 * G + 10 and d > 5 * G - (64 << 20), ("first data", d)
h2 = os.lseek(fd, d, os.SEEK_HOLE)
assert h2 > 5 * G + 110 and h2 < 5 * G + (64 << 20), ("hole after data", h2)
try:
    os.lseek(fd, h2, os.SEEK_DATA)
    sys.exit("SEEK_DATA past the last data should fail with ENXIO")
except OSError as e:
    assert e.errno == 6, e
assert os.pread(fd, 110, 5 * G) == bytes(10) + b"x" * 100
PY
check "cmp of a hole against /dev/zero (first 256 MiB)" cmp -n $((256 << 20)) "$MNT/sparse" /dev/zero
check "fallocate grows the size" fallocate -l 3M "$MNT/falloc"
check "fallocated size" [ "$(stat -c %s "$MNT/falloc")" = $((3 << 20)) ]
head -c 4M /dev/urandom >"$WORK/r"
cp "$WORK/r" "$MNT/punch"
check "fallocate --punch-hole" fallocate -p -o 1048576 -l 1048576 "$MNT/punch"
dd if=/dev/zero of="$WORK/r" bs=1M seek=1 count=1 conv=notrunc status=none
check "punched range reads zeros, the rest unchanged" cmp "$WORK/r" "$MNT/punch"
check "truncate shrink then grow reads zeros" /usr/bin/python3 - "$MNT/punch" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
os.ftruncate(fd, 100)
os.ftruncate(fd, 3 << 20)
b = os.pread(fd, 3 << 20, 0)
assert len(b) == 3 << 20 and b[100:] == bytes(len(b) - 100)
PY
unmount_b2fs
check "backing frames valid" frame_sealed "$BACK/sparse.b2frame"
finish
