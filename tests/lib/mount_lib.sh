# Shared by the tests that really mount b2fs (tests/fs/mount_*.sh, tests/reliability/rel_*.sh).
# Source after tests/lib/lib.sh. Provides: B2FS, need_fuse, mount_b2fs, unmount_b2fs,
# remount_b2fs, and a scratch dir $WORK removed at exit (unmounting first).
# B2FS_TEST_BACK, when set, is the backing directory instead of $WORK/back (an empty one the
# test may fill: tests/cluster/cluster_gluster.sh points it into a cluster file system).
B2FS="$top_builddir/fs/b2fs"
B2FRAME="$top_builddir/contrib/b2frame"

need_fuse() {
    [ -c /dev/fuse ] || skip_all "/dev/fuse is not available"
    command -v fusermount3 >/dev/null || skip_all "fusermount3 is not installed"
    [ -x "$B2FS" ] || skip_all "b2fs is not built ($B2FS)"
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/b2fs-test.XXXXXX")
    MNT="$WORK/mnt"
    BACK=${B2FS_TEST_BACK:-$WORK/back}
    mkdir -p "$MNT" "$BACK"
    trap 'cleanup_mount' EXIT
    # a probe mount: if the kernel refuses FUSE mounts here (containers), say so
    if ! "$B2FS" "$BACK" "$MNT" 2>"$WORK/probe.err"; then
        skip_all "cannot mount FUSE here: $(cat "$WORK/probe.err")"
    fi
    unmount_b2fs
}

cleanup_mount() {
    local m
    for m in $(grep " fuse.b2fs " /proc/mounts | awk '{print $2}' | grep "^$WORK/" || true); do
        fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null
    done
    rm -rf "$WORK"
}

# mount_b2fs [b2fs args...]: mounts $BACK on $MNT (logs in $WORK/b2fs.log), waits for it.
mount_b2fs() {
    "$B2FS" -f "$@" "$BACK" "$MNT" 2>>"$WORK/b2fs.log" &
    B2FS_PID=$!
    local i
    for i in $(seq 1 100); do
        if grep -q " $MNT fuse.b2fs " /proc/mounts; then return 0; fi
        kill -0 "$B2FS_PID" 2>/dev/null || break
        sleep 0.05
    done
    echo "mount failed:"; cat "$WORK/b2fs.log"
    return 1
}

# unmount_b2fs: unmounts and waits for the daemon to finish committing.
unmount_b2fs() {
    local i
    for i in $(seq 1 50); do
        fusermount3 -u "$MNT" 2>/dev/null && break
        sleep 0.1
    done
    if [ -n "${B2FS_PID:-}" ]; then
        wait "$B2FS_PID" 2>/dev/null
        B2FS_PID=
    fi
    ! grep -q " $MNT fuse.b2fs " /proc/mounts
}

remount_b2fs() {
    unmount_b2fs && mount_b2fs "$@"
}

# frame_ok FILE: the backing file is a valid frame (b2frame verify when it is built).
frame_ok() {
    if [ -x "$B2FRAME" ]; then
        "$B2FRAME" verify "$1" >/dev/null 2>&1
    else
        echo "b2frame is not built: cannot verify $1"; return 1
    fi
}

# frame_sealed FILE: as frame_ok, and (unless it holds no chunk) every stored chunk of it has
# checksums that hold and its fingerprint holds: what every frame b2fs writes must pass
frame_sealed() {
    local out
    out=$("$B2FRAME" verify "$1" 2>&1) || { echo "$out"; return 1; }
    grep -q ': ok (0 chunks)$' <<<"$out" && return 0
    if ! grep -Eq ': ok \([0-9]+ chunks, ([0-9]+) of \1 stored ones checked against checksums; (header, index and trailer|the whole frame) by fingerprint\)$' <<<"$out"; then
        echo "not sealed: $out"
        return 1
    fi
}

# for check: not CMD... passes when CMD fails; refused RC OUTPUT PATTERN passes when the
# command failed and its output matches PATTERN
not() { ! "$@"; }
refused() { [ "$1" -ne 0 ] && grep -q -- "$3" <<<"$2"; }
