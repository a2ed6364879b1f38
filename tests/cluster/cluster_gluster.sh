#!/bin/bash
# b2fs on a real cluster file system: a GlusterFS replica-2 volume on this machine
# (tests/lib/gluster_lib.sh), mounted through gluster's FUSE client twice as two hosts in
# miniature, host A on client 1 and host B on client 2, each with its own b2fs mount.
#  0. locks between the hosts: an OFD lock and a POSIX lock taken through client 1 block a
#     conflicting one through client 2, and are released on close (what b2fs needs)
#  1. the two-mount tests with A and B on the two hosts: writers on different files,
#     one file in turns, readers during commits (tests/reliability/rel_twomounts.sh)
#  2. two writers on one file from the two hosts, torn-record checks, chunks of both kept
#     (tests/reliability/rel_twomounts_writers.sh)
#  3. the random-operation model test on each host's mount (tests/reliability/rel_random.sh,
#     CLUSTER_RANDOM_OPS operations a seed, default 4000)
#  4. SIGKILL of host A's b2fs while both hosts write: host B goes on and finishes; every
#     frame on both bricks passes `b2frame verify`; every record host A wrote before an
#     fsync that returned is there, read through B and through A mounted again
#  5. a brick killed while host A writes, then started again: the replica heals, both
#     bricks hold the same frame, and everything the writer was told was written is there
#  6. everything torn down: no gluster process or mount of the test left
# With CB2CHECK=/path/to/a/C-Blosc2-checker (prints "FILE OK ..." per frame it opens and
# decodes whole, the fields separated by blanks or tabs), the
# frames of 4 and 5 are also opened by C-Blosc2. Needs root, /dev/fuse and GlusterFS;
# where gluster cannot run this test fails (it is not skipped): contrib/run-tests runs it.
set -u
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
. "$top_srcdir/tests/lib/rel_lib.sh"
. "$top_srcdir/tests/lib/gluster_lib.sh"

[ "$(id -u)" -eq 0 ] || { fail "needs root (glusterd, mounts)"; finish; exit 1; }
[ -c /dev/fuse ] || { fail "no /dev/fuse: cannot mount"; finish; exit 1; }
need_fuse
GL_DIR=$WORK/gluster
mkdir -p "$GL_DIR"
teardown() {
    unmount_b2fs_all
    gl_stop
    rm -rf "$WORK"
}
trap teardown EXIT
# a timeout's SIGTERM (or ^C) exits through the EXIT trap too: nothing of gluster is left running
trap 'exit 143' TERM
trap 'exit 130' INT
if ! gl_start; then
    echo "########################################################"
    echo "GlusterFS could not start: $GL_ERR"
    echo "########################################################"
    fail "a GlusterFS replica-2 volume with two clients: $GL_ERR"
    finish; exit 1
fi
ok "GlusterFS volume $GL_VOL (replica 2, bricks $GL_HOST:$GL_BRICK1 and :$GL_BRICK2), two clients mounted"

# run_sub NAME SCRIPT VAR=VALUE...: one of the suite's tests with its backing directories on
# the cluster; its counts are added to this test's
run_sub() {
    local name=$1 script=$2 line p f
    shift 2
    env "$@" top_srcdir="$top_srcdir" top_builddir="$top_builddir" \
        bash "$top_srcdir/$script" >"$GL_DIR/$name.out" 2>&1
    line=$(tail -n 1 "$GL_DIR/$name.out")
    if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
        p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]}
        n_pass=$((n_pass + p)); n_fail=$((n_fail + f))
        echo "$name ($script): $line"
        [ "$f" -eq 0 ] || grep -E '^(FAIL|first failed)' "$GL_DIR/$name.out" | sed "s/^/  $name: /"
    else
        fail "$name ($script): no result line: $line"
        tail -n 20 "$GL_DIR/$name.out"
    fi
}

# 0. locks between clients
/usr/bin/python3 - "$GL_C1" "$GL_C2" >"$GL_DIR/locks.out" 2>&1 <<'PY'
import fcntl, os, struct, sys
F_OFD_SETLK = 37
c1, c2 = sys.argv[1], sys.argv[2]
open(os.path.join(c1, "lockfile"), "wb").write(b"x" * 4096)
def lock(fd, ofd, kind=fcntl.F_WRLCK):
    fl = struct.pack("hhqqi", kind, 0, 0, 0, 0)
    try:
        fcntl.fcntl(fd, F_OFD_SETLK if ofd else fcntl.F_SETLK, fl)
        return True
    except OSError:
        return False
ok = True
for ofd, name in ((True, "OFD"), (False, "POSIX")):
    a = os.open(os.path.join(c1, "lockfile"), os.O_RDWR)
    if not lock(a, ofd):
        print(name, "lock through client 1 refused"); ok = False
    # POSIX locks of one process never conflict with each other: ask from a child
    pid = os.fork()
    if pid == 0:
        b = os.open(os.path.join(c2, "lockfile"), os.O_RDWR)
        os._exit(0 if lock(b, ofd) else 1)
    _, st = os.waitpid(pid, 0)
    if os.WEXITSTATUS(st) == 0:
        print(name, "lock through client 2 granted while client 1 holds it"); ok = False
    os.close(a)
    pid = os.fork()
    if pid == 0:
        b = os.open(os.path.join(c2, "lockfile"), os.O_RDWR)
        os._exit(0 if lock(b, ofd) else 1)
    _, st = os.waitpid(pid, 0)
    if os.WEXITSTATUS(st) != 0:
        print(name, "lock through client 2 refused after client 1 closed"); ok = False
    print(name, "locks: client 2 blocked while client 1 held the lock, granted after close" if ok else "")
sys.exit(0 if ok else 1)
PY
rc=$?
cat "$GL_DIR/locks.out"
check "0. OFD and POSIX locks pass between the two clients" [ $rc -eq 0 ]
rm -f "$GL_C1/lockfile"

# on a cluster file system a default mount compresses as written (compress_idle 0 there:
# storing a file as written and rewriting it compressed later would move more bytes)
mkdir -p "$GL_C1/defaults" "$WORK/mntD"
MNT=$WORK/mntD BACK=$GL_C1/defaults rel_mount || fail "0. a default mount over the cluster"
seq 1 300000 >"$WORK/mntD/numbers"
check "0. over the cluster a default mount compresses a new file as written" \
    not grep -q stored <(getfattr --only-values -n user.blosc2.chunkfilters "$WORK/mntD/numbers" 2>/dev/null)
# a file of less than a chunk gets its typesize at its close, and is compressed with it then
head -c 20000 "$WORK/mntD/numbers" >"$WORK/numbers.small"
cp "$WORK/numbers.small" "$WORK/mntD/small"
check "0. ... and a small text file, which reads back" cmp "$WORK/numbers.small" "$WORK/mntD/small"
MNT=$WORK/mntD rel_unmount

# 1-3. the suite's tests with the hosts' backing directories on the cluster
for d in twomounts writers randomA randomB; do mkdir -p "$GL_C1/$d"; done
run_sub twomounts tests/reliability/rel_twomounts.sh \
    B2FS_TEST_BACK="$GL_C1/twomounts" B2FS_TEST_BACK2="$GL_C2/twomounts" REL_TWO_OPS=2000
run_sub writers tests/reliability/rel_twomounts_writers.sh \
    B2FS_TEST_BACK="$GL_C1/writers" B2FS_TEST_BACK2="$GL_C2/writers"
run_sub randomA tests/reliability/rel_random.sh \
    B2FS_TEST_BACK="$GL_C1/randomA" REL_RANDOM_OPS="${CLUSTER_RANDOM_OPS:-4000}" REL_RANDOM_EVERY=1000
run_sub randomB tests/reliability/rel_random.sh \
    B2FS_TEST_BACK="$GL_C2/randomB" REL_RANDOM_OPS="${CLUSTER_RANDOM_OPS:-4000}" REL_RANDOM_EVERY=1000

# A record writer: RECORDS records of 64 KiB (each filled from its number and SEED) into
# FILE, an fsync every 8 records, after which the count of records made durable is written
# to LOG; stops at the first error (its mount gone) or after RECORDS.
WRITER=$GL_DIR/writer.py
cat >"$WRITER" <<'PY'
import os, sys
path, seed, records, log = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
R = 65536
def rec(i):
    return (b"%08d-%04d-" % (i, seed) * (R // 14 + 1))[:R]
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
try:
    for i in range(records):
        os.pwrite(fd, rec(i), i * R)
        if i % 8 == 7:
            os.fsync(fd)
            with open(log, "w") as f:
                f.write("%d\n" % (i + 1))
    os.fsync(fd)
    os.close(fd)
    with open(log, "w") as f:
        f.write("%d\n" % records)
except OSError as e:
    print("writer stopped:", e)
    sys.exit(3)
PY
# records_ok FILE SEED N: the first N records of FILE are the writer's
records_ok() {
    /usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import sys
path, seed, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
R = 65536
with open(path, "rb") as f:
    for i in range(n):
        want = (b"%08d-%04d-" % (i, seed) * (R // 14 + 1))[:R]
        got = f.read(R)
        if got != want:
            print("record", i, "differs"); sys.exit(1)
PY
}
# bricks_ok DIR...: every frame under each brick directory passes b2frame verify (and, with
# CB2CHECK, opens in C-Blosc2)
bricks_ok() {
    local d f bad=0 n=0
    for d in "$@"; do
        while IFS= read -r f; do
            n=$((n + 1))
            frame_sealed "$f" >/dev/null || { echo "b2frame verify: $f"; bad=1; }
            if [ -n "${CB2CHECK:-}" ]; then
                "$CB2CHECK" "$f" | awk '$2 == "OK" { ok = 1 } END { exit !ok }' ||
                    { echo "C-Blosc2 cannot read $f"; bad=1; }
            fi
        done < <(find "$d" -name '*.b2frame' -not -path '*/.glusterfs/*')
    done
    echo "$n frames on the bricks checked"
    [ $bad -eq 0 ] && [ $n -gt 0 ]
}

# 4. SIGKILL of host A's b2fs while both write
mkdir -p "$GL_C1/kill"
A=$WORK/mntA B=$WORK/mntB
mkdir -p "$A" "$B"
MNT=$A BACK=$GL_C1/kill rel_mount -o chunksize=256K || fail "4. mount A"
pidA=$B2FS_PID
MNT=$B BACK=$GL_C2/kill rel_mount -o chunksize=256K || fail "4. mount B"
/usr/bin/python3 "$WRITER" "$A/fa" 1 100000 "$GL_DIR/synced_a" >"$GL_DIR/wa.out" 2>&1 &
wa=$!
/usr/bin/python3 "$WRITER" "$B/fb" 2 600 "$GL_DIR/synced_b" >"$GL_DIR/wb.out" 2>&1 &
wb=$!
sleep 3
kill -9 "$pidA"
wait "$wa"
synced_a=$(cat "$GL_DIR/synced_a" 2>/dev/null || echo 0)
check "4. host B's writer went on and finished after host A's b2fs was killed" wait "$wb"
fusermount3 -uz "$A" 2>/dev/null
rm -f "$WORK/b2fs.$(basename "$A").pid"
echo "4. host A made $synced_a records durable (fsync returned) before SIGKILL"
check "4. host A had made records durable before the kill" [ "$synced_a" -gt 0 ]
check "4. every frame on both bricks is sound" bricks_ok "$GL_BRICK1/kill" "$GL_BRICK2/kill"
sleep 1.1
check "4. host B reads A's $synced_a fsynced records" records_ok "$B/fa" 1 "$synced_a"
check "4. host B reads its own 600 records" records_ok "$B/fb" 2 600
MNT=$A BACK=$GL_C1/kill rel_mount -o chunksize=256K || fail "4. mount A again"
check "4. host A, mounted again, reads its $synced_a fsynced records" records_ok "$A/fa" 1 "$synced_a"
check "4. host A, mounted again, reads B's 600 records" records_ok "$A/fb" 2 600

# 5. a brick killed while host A writes, then started again
mkdir -p "$GL_C1/heal"
MNT=$A rel_unmount; MNT=$B rel_unmount
MNT=$A BACK=$GL_C1/heal rel_mount -o chunksize=256K || fail "5. mount A"
MNT=$B BACK=$GL_C2/heal rel_mount -o chunksize=256K || fail "5. mount B"
/usr/bin/python3 "$WRITER" "$A/fc" 3 1200 "$GL_DIR/synced_c" >"$GL_DIR/wc.out" 2>&1 &
wc_pid=$!
sleep 1
brick=$(gl_brick_pid 2)
if [ -n "$brick" ]; then
    kill -9 "$brick"
    ok "5. brick 2's server (pid $brick) killed while host A writes"
else
    fail "5. no server found for brick 2"
fi
check "5. host A's writer finished with brick 2 down: $(cat "$GL_DIR/wc.out" 2>/dev/null)" wait "$wc_pid"
check "5. host B reads all 1200 records with brick 2 down" records_ok "$B/fc" 3 1200
check "5. brick 2 started again (volume start force), glusterd lists it online" gl_brick_restart 2
check "5. the replica healed (nothing left in heal info)" gl_heal_wait 120
check "5. both bricks hold the same frame" cmp "$GL_BRICK1/heal/fc.b2frame" "$GL_BRICK2/heal/fc.b2frame"
check "5. the frames on both bricks are sound" bricks_ok "$GL_BRICK1/heal" "$GL_BRICK2/heal"
check "5. brick 2's copy holds every record" records_ok <("$B2FRAME" cat "$GL_BRICK2/heal/fc.b2frame") 3 1200
check "5. host A reads every record" records_ok "$A/fc" 3 1200
MNT=$A check "unmount A" rel_unmount
MNT=$B check "unmount B" rel_unmount

# 6. nothing left
gl_stop
left=$(gl_leftovers)
check "6. torn down: no gluster process or mount of the test left${left:+ ($left)}" [ -z "$left" ]
finish
