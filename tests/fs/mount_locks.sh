#!/bin/bash
# The lock check of a read-write mount: where the backing file system does not enforce OFD
# locks (here: b2fs with tests/fs/nolocks.so preloaded, whose fcntl refuses them as such a
# file system does), b2fs refuses to mount read-write and says why; -o ro still mounts;
# without the preload the same directory mounts read-write.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
need_fuse
SHIM="$top_builddir/tests/fs/nolocks.so"
[ -f "$SHIM" ] || { fail "tests/fs/nolocks.so is not built"; finish; exit 1; }
printf 'kept\n' >"$WORK/plain"
cp "$WORK/plain" "$BACK/plain"

LD_PRELOAD=$SHIM "$B2FS" "$BACK" "$MNT" >"$WORK/out" 2>"$WORK/err"
rc=$?
check "without OFD locks: a read-write mount is refused (exit status $rc)" [ $rc -ne 0 ]
check "... and says why: $(head -c 200 "$WORK/err")" grep -q "does not enforce OFD locks" "$WORK/err"
check "... and suggests -o ro" grep -q -- "-o ro" "$WORK/err"
check "... nothing is mounted" sh -c "! grep -q ' $MNT fuse.b2fs ' /proc/mounts"
check "... no temporary file is left in BACKING" [ -z "$(find "$BACK" -name '.b2fs-tmp-*')" ]

LD_PRELOAD=$SHIM mount_b2fs -o ro || fail "without OFD locks: -o ro mounts"
check "-o ro without OFD locks: files read" cmp "$WORK/plain" "$MNT/plain"
check "-o ro: unmount" unmount_b2fs

mount_b2fs || fail "with OFD locks: a read-write mount"
seq 1 5000 >"$WORK/text"   # (one that compresses: a frame, not a plain file)
check "with OFD locks: a file written" cp "$WORK/text" "$MNT/new"
check "with OFD locks: unmount" unmount_b2fs
check "with OFD locks: the new file is a frame" frame_ok "$BACK/new.b2frame"
finish
