#!/bin/bash
# Thousands of random writes, appends, truncates, renames and reads (fixed seeds)
# checked against the same operations on plain files, with a remount in the middle;
# after it a small dirty_size, so that commits run behind the writers (commit_behind.c).
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
# new files made frames at their create (not written plain first, new_plain): this suite
# looks at frames as they are written
B2FS_SUITE_OPTS=new_plain=off
need_fuse

REF=$WORK/ref
mkdir -p "$REF"
mount_b2fs -o chunksize=64K,codec=lz4 || { fail "mount"; finish; exit 1; }
check "random operations, seed 1" /usr/bin/python3 "$top_srcdir/tests/fs/mount_random.py" "$MNT" "$REF" 1 2500
check "remount" remount_b2fs -o chunksize=64K,codec=zstd,dirty_size=1M
check "random operations after remount, seed 2" /usr/bin/python3 "$top_srcdir/tests/fs/mount_random.py" "$MNT" "$REF" 2 2500
# rewriting a file over and over: replaced chunks are reclaimed by compaction
head -c 4M /dev/urandom >"$WORK/r4"
for i in $(seq 1 12); do cp "$WORK/r4" "$MNT/rewritten" || break; done
dd if=/dev/urandom of="$MNT/rewritten" bs=64K count=20 seek=3 conv=notrunc status=none
dd if="$MNT/rewritten" bs=64K count=20 skip=3 status=none of="$WORK/mid"
dd if="$WORK/mid" of="$WORK/r4" bs=64K seek=3 conv=notrunc status=none
setfattr -n user.tag -v kept "$MNT/rewritten"
for i in $(seq 1 12); do dd if="$WORK/r4" of="$MNT/rewritten" bs=1M conv=notrunc status=none; done
size=$(stat -c %s "$BACK/rewritten.b2frame")
check "backing file stays under 3x its contents after 24 rewrites ($size bytes)" [ "$size" -lt $((12 << 20)) ]
check "  ... and reads right" cmp "$WORK/r4" "$MNT/rewritten"
check "  ... keeps its user.* attributes" [ "$(getfattr --only-values -n user.tag "$MNT/rewritten" 2>/dev/null)" = kept ]
unmount_b2fs
bad=0
for f in "$BACK"/*; do frame_sealed "$f" || { bad=1; echo "not a valid frame: $f"; }; done
check "backing files are valid frames" [ $bad -eq 0 ]
finish
