# Shared by the tests that really mount b2fs (tests/fs/mount_*.sh, tests/reliability/rel_*.sh).
# Source after tests/lib/lib.sh. Provides: B2FS, need_fuse, mount_b2fs, unmount_b2fs, unmount_b2fs_all,
# remount_b2fs, and a scratch dir $WORK removed at exit (unmounting first), and a watchdog
# that reports and ends a daemon that hangs.
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
    start_watchdog
    # a probe mount: if the kernel refuses FUSE mounts here (containers), say so
    if ! "$B2FS" "$BACK" "$MNT" 2>"$WORK/probe.err"; then
        skip_all "cannot mount FUSE here: $(cat "$WORK/probe.err")"
    fi
    unmount_b2fs
}

# unmount_b2fs_all: every b2fs mount under $WORK.
unmount_b2fs_all() {
    local m
    for m in $(grep " fuse.b2fs " /proc/mounts | awk '{print $2}' | grep "^$WORK/" || true); do
        fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null
    done
}

# At exit: the b2fs mounts, then any other file system a test mounted under $WORK (a small
# tmpfs or a loop device as BACKING; the deepest first), then $WORK itself.
cleanup_mount() {
    local m
    [ -n "${WATCHDOG_PID:-}" ] && kill "$WATCHDOG_PID" 2>/dev/null
    unmount_b2fs_all
    for m in $(awk '{print $2}' /proc/mounts | grep "^$WORK/" | sort -r || true); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
    rm -rf "$WORK"
}

# A daemon that hangs would hold the test until the suite's timeout kills it, and the daemon's
# log would go with $WORK. After B2FS_TEST_WATCHDOG seconds (1,080 unless set: under the
# suite's 1,200) the watchdog prints where the test's processes and each of its daemons wait,
# with the daemon's last log lines, then kills the daemons, so that the checks still waiting
# fail and the test ends with its summary line.
start_watchdog() {
    (
        trap 'kill $sleeper 2>/dev/null; exit 0' TERM
        sleep "${B2FS_TEST_WATCHDOG:-1080}" &
        sleeper=$!
        wait $sleeper
        report_hang
    ) &
    WATCHDOG_PID=$!
}

report_hang() {
    local pid t sid
    sid=$(ps -o sid= -p $$ | tr -d ' ')
    echo "### watchdog: $(basename "$0") still runs after ${B2FS_TEST_WATCHDOG:-1080} s"
    ps -o pid,ppid,stat,wchan:32,args --forest -s "$sid"
    for pid in $(ps -o pid=,stat= -s "$sid" | awk '$2 ~ /^D/ {print $1}'); do
        echo "### $pid ($(cat "/proc/$pid/comm")) waits in the kernel:"
        cat "/proc/$pid/stack" 2>/dev/null
    done
    for pid in $(pgrep -x b2fs); do
        grep -qa -- "$WORK/" "/proc/$pid/cmdline" 2>/dev/null || continue
        echo "### daemon $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
        echo "### its log, last lines:"
        tail -n 30 "$WORK/b2fs.log" 2>/dev/null
        for t in /proc/"$pid"/task/*; do
            echo "### thread ${t##*/} ($(cat "$t/comm")): waits in $(cat "$t/wchan")"
            cat "$t/stack" 2>/dev/null
        done
        if command -v gdb >/dev/null; then
            timeout 120 gdb -p "$pid" -batch -ex "set print frame-arguments none" \
                -ex "thread apply all bt" 2>&1 |
                grep -Ev "^\[(New LWP|Thread debugging|Inferior)|^Using host|No such file"
        fi
        kill -9 "$pid"
        echo "### watchdog: killed daemon $pid"
    done
}

# mount_b2fs [b2fs args...]: mounts $BACK on $MNT (logs in $WORK/b2fs.log), waits for it.
# B2FS_SUITE_OPTS, when a suite sets it, go before the args (which win where both name an
# option).
mount_b2fs() {
    "$B2FS" -f ${B2FS_SUITE_OPTS:+-o "$B2FS_SUITE_OPTS"} "$@" "$BACK" "$MNT" 2>>"$WORK/b2fs.log" &
    B2FS_PID=$!
    local i
    for i in $(seq 1 100); do
        # shown in /proc/mounts before the daemon has finished starting; a stat of the
        # root is answered once it serves requests
        if grep -q " $MNT fuse.b2fs " /proc/mounts; then stat "$MNT" >/dev/null && return 0; fi
        kill -0 "$B2FS_PID" 2>/dev/null || break
        sleep 0.05
    done
    echo "mount failed:"; cat "$WORK/b2fs.log"
    return 1
}

# unmount_b2fs: unmounts and waits for the daemon to finish committing. A mount still busy
# after 5 s is reported with the processes that hold it, and not waited for.
unmount_b2fs() {
    local i err p
    for i in $(seq 1 50); do
        err=$(fusermount3 -u "$MNT" 2>&1) && break
        sleep 0.1
    done
    if grep -q " $MNT fuse.b2fs " /proc/mounts; then
        echo "unmount of $MNT failed: $err; processes that use it:"
        for p in /proc/[0-9]*; do
            ls -l "$p/cwd" "$p/root" "$p/fd" 2>/dev/null | grep -q -- "$MNT" &&
                echo "  ${p#/proc/} $(tr '\0' ' ' <"$p/cmdline")"
        done
        return 1
    fi
    if [ -n "${B2FS_PID:-}" ]; then
        wait "$B2FS_PID" 2>/dev/null
        B2FS_PID=
    fi
    ! grep -q " $MNT fuse.b2fs " /proc/mounts
}

remount_b2fs() {
    unmount_b2fs && mount_b2fs "$@"
}

# backing_on_ext4 [mkfs.ext4 args...]: $BACK becomes a new ext4 of 64 MiB in a loop
# device (unmounted by cleanup_mount); the test is skipped, saying why, where that cannot
# be made or where B2FS_TEST_BACK names another BACKING.
backing_on_ext4() {
    [ -z "${B2FS_TEST_BACK:-}" ] || skip_all "makes its own BACKING in a loop device (B2FS_TEST_BACK is set)"
    command -v mkfs.ext4 >/dev/null || skip_all "mkfs.ext4 is not installed"
    truncate -s 64M "$WORK/ext4.img"
    mkfs.ext4 -q -F "$@" "$WORK/ext4.img" 2>"$WORK/mkfs.err" ||
        skip_all "mkfs.ext4 $*: $(cat "$WORK/mkfs.err")"
    mount -o loop "$WORK/ext4.img" "$BACK" 2>"$WORK/mount.err" ||
        skip_all "cannot mount an ext4 image here: $(cat "$WORK/mount.err")"
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

# write_held SRC DST MIB SECS: in the background ($! is its pid), a program writes the
# first MIB MiB of SRC into the new file DST in one write and keeps it open SECS seconds
write_held() {
    /usr/bin/python3 - "$@" <<'PY' &
import sys, time
data = open(sys.argv[1], "rb").read(int(sys.argv[3]) << 20)
with open(sys.argv[2], "wb") as f:
    f.write(data)
    f.flush()
    time.sleep(float(sys.argv[4]))
PY
}

# reached_held FILE BYTES TENTHS PID: FILE (in BACKING) holds BYTES within TENTHS tenths of
# a second, and the writer PID (which holds it open) is still there
reached_held() {
    for _ in $(seq 1 "$3"); do
        [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -ge "$2" ] && break
        sleep 0.1
    done
    [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -ge "$2" ] && kill -0 "$4"
}

# wait_until TENTHS CMD...: waits up to TENTHS tenths of a second until CMD succeeds
wait_until() {
    local tenths=$1 i
    shift
    for i in $(seq 1 "$tenths"); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

# for check: not CMD... passes when CMD fails; refused RC OUTPUT PATTERN passes when the
# command failed and its output matches PATTERN
not() { ! "$@"; }
refused() { [ "$1" -ne 0 ] && grep -q -- "$3" <<<"$2"; }
