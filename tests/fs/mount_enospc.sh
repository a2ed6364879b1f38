#!/bin/bash
# A full backing file system: the writer gets ENOSPC (from write or close), the last
# committed frame stays valid, and the mount goes on working.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
# new files made frames at their create (not written plain first, new_plain): this suite
# looks at frames as they are written
B2FS_SUITE_OPTS=new_plain=off
need_fuse

mount -t tmpfs -o size=4M b2fs-test "$BACK" 2>/dev/null || skip_all "cannot mount a small tmpfs as the backing directory"
head -c 1M /dev/urandom >"$WORK/small"
head -c 12M /dev/urandom >"$WORK/big"

mount_b2fs -o dirty_size=1M || { fail "mount"; finish; exit 1; }
check "a small file fits" cp "$WORK/small" "$MNT/small"
out=$(cp "$WORK/big" "$MNT/big" 2>&1); rc=$?
echo "$out"
check "cp of 12 MiB into 4 MiB fails with ENOSPC" refused $rc "$out" "No space left on device"
out=$(dd if="$WORK/big" of="$MNT/small" bs=1M seek=1 conv=notrunc,fsync status=none 2>&1); rc=$?
echo "$out"
check "growing a committed file fails with ENOSPC" refused $rc "$out" "No space left on device"
rm -f "$MNT/big"
unmount_b2fs
check "the committed frame is still valid" frame_ok "$BACK/small.b2frame"
mount_b2fs || { fail "remount"; finish; exit 1; }
# What a failed commit left staged is tried again by the next one (at close, when the file
# goes idle, at unmount), which may fit once big is gone: the file then holds its committed
# contents followed by a start of what dd wrote after them, never anything else.
grown_ok() {
    local size
    size=$(stat -c %s "$MNT/small") && [ "$size" -ge 1048576 ] &&
        cmp -n 1048576 "$WORK/small" "$MNT/small" &&
        cmp -n $((size - 1048576)) "$WORK/big" <(tail -c +1048577 "$MNT/small")
}
check "  ... with its committed contents (and perhaps some of what was written after them)" grown_ok
check "the mount still writes" sh -c "echo hello >'$MNT/after' && [ \"\$(cat '$MNT/after')\" = hello ]"
unmount_b2fs
grep -c "No space left" "$WORK/b2fs.log" | sed 's/^/log lines about ENOSPC: /'
finish
