# Shared by the reliability tests (tests/reliability/rel_*.sh) and tests/fs/mount_rechunk.sh,
# sourced after lib.sh and mount_lib.sh.
# The daemon's pid is kept in a file so that another process (b2fsx's remount command,
# a crash round) can unmount, kill or remount the same mount.
# rel_mount ARGS...      mount_b2fs ARGS on $MNT, pid in $(rel_pidfile) (one per MNT)
# rel_unmount            unmount, wait until the daemon has exited (it commits first)
# rel_remount ARGS...    both
# rel_remount_cmd ARGS...  prints a shell command that does rel_remount ARGS from anywhere
# rel_frames_ok DIR      every frame under DIR is valid, with checksums and fingerprint that hold
#                        (frame_sealed); names bad ones

rel_pidfile() { echo "$WORK/b2fs.$(basename "$MNT").pid"; }

rel_mount() {
    mount_b2fs "$@" || return 1
    echo "$B2FS_PID" >"$(rel_pidfile)"
}

# rel_mount_two OPTS...: mounts BACKING twice, on A=$MNT and on B=$WORK/mnt2, with the same
# options; onA CMD / onB CMD run a rel_* command against one of them. Ends the test on failure.
# With B2FS_TEST_BACK2 set, B mounts that directory instead: the same directory as BACK seen
# through another client of a cluster file system (two hosts in miniature).
rel_mount_two() {
    A=$MNT
    B=$WORK/mnt2
    BACK_A=$BACK
    BACK_B=${B2FS_TEST_BACK2:-$BACK}
    mkdir -p "$B"
    onA rel_mount "$@" && onB rel_mount "$@" || { fail "mount A and B"; finish; exit 1; }
}
onA() { MNT=$A BACK=$BACK_A "$@"; }
onB() { MNT=$B BACK=$BACK_B "$@"; }

# rel_wait_gone PID: waits (up to 60 s) until PID has exited
rel_wait_gone() {
    local i
    for i in $(seq 1 600); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
    echo "daemon $1 still running 60 s after unmount"
    return 1
}

rel_unmount() {
    local pid i
    pid=$(cat "$(rel_pidfile)" 2>/dev/null)
    for i in $(seq 1 50); do
        grep -q " $MNT fuse.b2fs " /proc/mounts || break
        fusermount3 -u "$MNT" 2>/dev/null && break
        sleep 0.1
    done
    if [ -n "$pid" ]; then
        rel_wait_gone "$pid" || return 1
        wait "$pid" 2>/dev/null
    fi
    rm -f "$(rel_pidfile)"
    B2FS_PID=
    ! grep -q " $MNT fuse.b2fs " /proc/mounts
}

rel_remount() {
    rel_unmount && rel_mount "$@"
}

rel_remount_cmd() {
    local q args=""
    for q in "$@"; do args="$args $(printf '%q' "$q")"; done
    printf 'top_srcdir=%q top_builddir=%q WORK=%q MNT=%q BACK=%q bash -c %q' \
        "$top_srcdir" "$top_builddir" "$WORK" "$MNT" "$BACK" \
        ". \"\$top_srcdir/tests/lib/lib.sh\"; . \"\$top_srcdir/tests/lib/mount_lib.sh\"; . \"\$top_srcdir/tests/lib/rel_lib.sh\"; rel_remount$args >/dev/null"
}

rel_frames_ok() {
    local f bad=0
    while IFS= read -r -d '' f; do
        case "$f" in
        *.b2frame | *.b2f | *.b2nd) frame_sealed "$f" || { echo "not a valid frame: $f"; bad=1; } ;;
        esac
    done < <(find "$1" -type f -print0)
    return $bad
}
