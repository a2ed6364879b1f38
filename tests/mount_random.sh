#!/bin/bash
# Thousands of random writes, appends, truncates, renames and reads (fixed seeds)
# checked against the same operations on plain files, with a remount in the middle.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/mount_lib.sh"
need_fuse

REF=$WORK/ref
mkdir -p "$REF"
mount_b2fs -o chunksize=64K,codec=lz4 || { fail "mount"; finish; exit 1; }
check "random operations, seed 1" /usr/bin/python3 "$top_srcdir/tests/mount_random.py" "$MNT" "$REF" 1 2500
check "remount" remount_b2fs -o chunksize=64K,codec=zstd
check "random operations after remount, seed 2" /usr/bin/python3 "$top_srcdir/tests/mount_random.py" "$MNT" "$REF" 2 2500
unmount_b2fs
bad=0
for f in "$BACK"/*; do frame_ok "$f" || { bad=1; echo "not a valid frame: $f"; }; done
check "backing files are valid frames" [ $bad -eq 0 ]
finish
