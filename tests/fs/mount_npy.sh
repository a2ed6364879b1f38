#!/bin/bash
# Arrays as .npy files: every array of tests/data/b2nd (written by C-Blosc2's b2nd API and
# by Caterva2) shows as STEM.npy with the bytes np.save writes and the C-order data
# C-Blosc2 gives; reads decode only the blocks that hold the items read; writes through
# the view land in place and stay after a remount; changes of header or size are refused
# with EPERM and a log line; np.save and cp store new arrays (with the codec and filters of
# their directory); what is no array for b2fs stays an ordinary frame with the same bytes.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
ND="$top_srcdir/tests/data/b2nd"
PY=/usr/bin/python3
$PY -c 'import numpy' 2>/dev/null || skip_all "python3-numpy is not installed"
need_fuse
export WORK
npy() { $PY "$top_srcdir/tests/fs/mount_npy.py" "$1" "$MNT" "$BACK" "$ND" "${@:2}"; }
nlog() { grep -c "$1" "$WORK/b2fs.log"; }
c_order() { $PY -c 'import numpy as np, sys, hashlib
print(hashlib.sha256(np.ascontiguousarray(np.load(sys.argv[1])).tobytes()).hexdigest())' "$1"; }
export -f c_order
export PY

cp "$ND"/*.b2nd "$BACK/"
chmod u+w "$BACK"/*.b2nd
mount_b2fs || { fail "mount"; finish; exit 1; }
check "STEM.b2nd is listed as STEM.npy" [ -f "$MNT/i4_2d.npy" ]
check "... and not as STEM" not [ -e "$MNT/i4_2d" ]
check "every array reads as C-Blosc2's C order (np.load, mmap, memmap, read)" npy sources
check "the files are np.save's bytes" npy numpy-header
check "cp and cmp see the same file" cp "$MNT/f8be_3d.npy" "$WORK/copy.npy"
check "... identical" cmp "$WORK/copy.npy" "$MNT/f8be_3d.npy"
check "od reads the header" grep -q "N   U   M   P   Y" <(od -c "$MNT/i4_1d.npy" | head -1)
check "ls -l shows header plus items" [ "$(stat -c %s "$MNT/i4_2d.npy")" = $((128 + 1000 * 700 * 4)) ]

check "two streaming readers of one array and one of another at once" sh -c '
    cat "$1/i4_2d.npy" >"$2/r1" & cat "$1/i4_2d.npy" >"$2/r2" & cat "$1/f8_2d_zstd.npy" >"$2/r3"
    wait; cat "$1/f8_2d_zstd.npy" >"$2/r4"
    cmp "$2/r1" "$2/r2" && cmp "$2/r3" "$2/r4" && [ "$(c_order "$2/r1")" = "$(c_order "$1/i4_2d.npy")" ]
' sh "$MNT" "$WORK"

# laziness: a fresh mount, nothing cached
remount_b2fs || fail "remount"
check "a row and a column decode only their blocks (i4_2d)" npy lazy i4_2d
check "... and with blocks of 4x8 complex items (c16_2d)" npy lazy c16_2d

# writes in place through the view
cp "$MNT/i4_2d.npy" "$WORK/i4_2d.npy"
check "np.memmap r+ writes a column and a row" $PY -c '
import numpy as np, sys
for p in sys.argv[1:]:
    m = np.load(p, mmap_mode="r+")
    m[:, 699] = -7
    m[301, :] = np.arange(700)
    m[999, 255:257] = 12345
    m.flush()' "$MNT/i4_2d.npy" "$WORK/i4_2d.npy"
check "dd conv=notrunc writes inside the data" \
    sh -c 'for f in "$1" "$2"; do printf "ABCDEFGH" | dd of="$f" bs=1 seek=100000 conv=notrunc status=none || exit 1; done' \
    sh "$MNT/i4_2d.npy" "$WORK/i4_2d.npy"
check "pwrite across chunks and blocks" $PY -c '
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_WRONLY)
    os.pwrite(fd, bytes(range(256)) * 40, 128 + 299 * 2800 + 1000)
    os.close(fd)' "$MNT/i4_2d.npy" "$WORK/i4_2d.npy"
check "the view reads what was written" cmp "$WORK/i4_2d.npy" "$MNT/i4_2d.npy"
check "writing the header's own bytes is allowed" \
    sh -c 'head -c 128 "$1" | dd of="$1" conv=notrunc status=none' sh "$MNT/i4_2d.npy"

# what the view refuses
refused() { "$@" 2>"$WORK/err"; local rc=$?; [ $rc -ne 0 ] && grep -q "Operation not permitted" "$WORK/err"; }
before=$(nlog "refused")
check "a header change: EPERM" refused sh -c 'printf "<f4" | dd of="$1" bs=1 seek=20 conv=notrunc status=none' sh "$MNT/i4_2d.npy"
check "truncate to another size: EPERM" refused truncate -s 1000 "$MNT/i4_2d.npy"
check "appending: EPERM" refused bash -c 'printf x >>"$1"' bash "$MNT/i4_2d.npy"
check "one log line each" [ "$(nlog "refused")" -eq $((before + 3)) ]
check "the array is unchanged by them" cmp "$WORK/i4_2d.npy" "$MNT/i4_2d.npy"
check "truncate to its own size is fine" truncate -s "$(stat -c %s "$MNT/i4_2d.npy")" "$MNT/i4_2d.npy"

# names
check "mv within .npy names renames the array" mv "$MNT/bool_2d.npy" "$MNT/mask.npy"
check "... stored as mask.b2nd" [ -f "$BACK/mask.b2nd" ]
cp "$MNT/bigchunk_2d.npy" "$WORK/bigchunk.npy"
check "mv to a name without .npy copies (EXDEV)" mv "$MNT/bigchunk_2d.npy" "$MNT/bigchunk.bin"
check "... to an ordinary file of the same bytes" cmp "$WORK/bigchunk.npy" "$MNT/bigchunk.bin"
check "... and the array is gone" not [ -e "$BACK/bigchunk_2d.b2nd" ]

# new arrays
check "np.save of 10 dtypes and shapes: stored as arrays, np.save's bytes" npy save
check "cp of a .npy file into the mount stores an array" cp "$WORK/copy.npy" "$MNT/copied.npy"
check "... readable as the same file" cmp "$WORK/copy.npy" "$MNT/copied.npy"
check "... with shape 17,13,11" [ "$(getfattr --only-values -n user.blosc2.b2nd.shape "$MNT/copied.npy")" = "17,13,11" ]
check "cp over an existing array replaces it" cp "$WORK/i4_2d.npy" "$MNT/copied.npy"
check "... with the new contents and shape" cmp "$WORK/i4_2d.npy" "$MNT/copied.npy"
check "Fortran order, objects, bad headers stay ordinary frames with their bytes" npy not-arrays
mkdir "$MNT/lz4dir"
setfattr -n user.blosc2.codec -v lz4 "$MNT/lz4dir"
setfattr -n user.blosc2.filters -v bitshuffle "$MNT/lz4dir"
cp "$WORK/copy.npy" "$MNT/lz4dir/a.npy"
attr() { getfattr --only-values -n "user.blosc2.$1" "$MNT/lz4dir/a.npy"; }
check "an array stored in a directory set to lz4, bitshuffle has them" \
    [ "$(attr codec)/$(attr filters)" = "lz4/bitshuffle" ]
check "... and its typesize is the item size" [ "$(attr typesize)" = 8 ]

unmount_b2fs
for f in "$BACK"/*.b2nd "$BACK"/*.b2frame; do
    [ -e "$f" ] || continue
    check "b2frame verify $(basename "$f")" frame_ok "$f"
done
check "b2frame info of a stored array shows its metalayer" grep -qx "b2nd.shape: 300,200" <("$B2FRAME" info "$BACK/f8.b2nd")
mount_b2fs || fail "remount"
check "the writes are there after a remount" cmp "$WORK/i4_2d.npy" "$MNT/i4_2d.npy"
unmount_b2fs
check "no ThreadSanitizer report in the daemon's log" not grep -q "ThreadSanitizer" "$WORK/b2fs.log"
finish
