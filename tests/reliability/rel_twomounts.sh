#!/bin/bash
# Two b2fs mounts over one backing directory (A on $WORK/mnt, B on $WORK/mnt2):
#  1. writers on both (b2fsx, each on its own file), readers on both reading the other's
#     file meanwhile; after close each mount reads the other's file exactly
#  2. one file written in turns through A and B (close between turns): each turn sees
#     the other's committed bytes
#  3. a writer's commits on A while readers on B and on A read self-checking records
#     (rel_torn, O_DIRECT): no torn or unreadable record
#   REL_TWO_OPS (3000) b2fsx operations, REL_TWO_SECONDS (10) for part 3.
# Writers on both mounts on the same file at once: rel_twomounts_writers.sh.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
. "$top_srcdir/tests/lib/rel_lib.sh"
# new files made frames at their create (not written plain first, new_plain): this suite
# looks at frames as they are written
B2FS_SUITE_OPTS=new_plain=off
need_fuse
B2FSX="$top_builddir/tests/reliability/b2fsx"
TORN="$top_builddir/tests/reliability/rel_torn"
[ -x "$B2FSX" ] && [ -x "$TORN" ] || skip_all "tests/reliability/b2fsx or tests/reliability/rel_torn is not built"
ops=${REL_TWO_OPS:-3000}
secs=${REL_TWO_SECONDS:-10}
rel_mount_two -o chunksize=64K

# 1. writers on both, readers on both
"$B2FSX" -q -s 11 -n "$ops" -m $((4 << 20)) "$A/xa" "$WORK/model_a" >"$WORK/xa.out" 2>&1 &
pa=$!
"$B2FSX" -q -s 12 -n "$ops" -m $((4 << 20)) "$B/xb" "$WORK/model_b" >"$WORK/xb.out" 2>&1 &
pb=$!
sleep 0.5
rerr=0
while kill -0 $pa 2>/dev/null || kill -0 $pb 2>/dev/null; do
    cat "$B/xa" >/dev/null 2>>"$WORK/readers.err" || rerr=$((rerr + 1))
    cat "$A/xb" >/dev/null 2>>"$WORK/readers.err" || rerr=$((rerr + 1))
    sleep 0.2
done
check "1. b2fsx on A's file: $(tail -n 1 "$WORK/xa.out")" wait $pa
check "1. b2fsx on B's file: $(tail -n 1 "$WORK/xb.out")" wait $pb
check "1. readers on the other mount meanwhile: no read error ($rerr)" [ $rerr -eq 0 ]
[ $rerr -eq 0 ] || head -n 5 "$WORK/readers.err"
sleep 1.2   # attribute cache timeout of the mount that did not write
check "1. B reads A's file as written" cmp "$B/xa" "$WORK/model_a"
check "1. A reads B's file as written" cmp "$A/xb" "$WORK/model_b"
check "1. frames valid" rel_frames_ok "$BACK"

# 2. one file, written in turns
: >"$WORK/turns"
turn_bad=0
for t in $(seq 1 10); do
    if [ $((t % 2)) -eq 1 ]; then m=$A; else m=$B; fi
    head -c $((100000 + t * 7777)) /dev/urandom >"$WORK/piece"
    dd if="$WORK/piece" of="$WORK/turns" bs=1 seek=$((t * 50000)) conv=notrunc status=none
    dd if="$WORK/piece" of="$m/turns" bs=64K oflag=seek_bytes seek=$((t * 50000)) \
        conv=notrunc status=none || turn_bad=1
    sleep 1.1
    if [ $((t % 2)) -eq 1 ]; then o=$B; else o=$A; fi
    cmp -s "$o/turns" "$WORK/turns" || { turn_bad=1; echo "turn $t: the other mount differs"; }
done
check "2. 10 turns between A and B on one file: each sees the other's bytes" [ $turn_bad -eq 0 ]
check "2. frame valid" frame_sealed "$BACK/turns.b2frame"

# 3. readers on both mounts during a writer's commits on A
rec=65536 nrecs=64
"$TORN" init "$A/torn" $rec $nrecs 0 || fail "3. init"
sleep 1.1
"$TORN" write "$A/torn" $rec $nrecs "$secs" >"$WORK/tw.out" 2>&1 &
pids=($!)
for i in 1 2 3; do
    "$TORN" read "$B/torn" $rec $nrecs "$secs" >"$WORK/trB$i.out" 2>&1 &
    pids+=($!)
    "$TORN" read "$A/torn" $rec $nrecs "$secs" >"$WORK/trA$i.out" 2>&1 &
    pids+=($!)
done
bad=0
for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
cat "$WORK/tw.out" "$WORK/trA1.out" "$WORK/trB1.out"
check "3. readers on A and B during A's commits: nothing torn or unreadable ($bad failed)" [ $bad -eq 0 ]
[ $bad -eq 0 ] || head -n 3 "$WORK"/tr*.out
# not checked (close-to-open, like NFS): a reader that keeps the file open on B does not
# see A's commits until it reopens; the newest generation B's readers saw says so
echo "3. newest generation seen by readers holding the file open on B: $(sed -n 's/.*newest generation //p' "$WORK"/trB*.out | sort -n | tail -n 1)"

check "unmount A" onA rel_unmount
check "unmount B" onB rel_unmount
check "frames valid" rel_frames_ok "$BACK"
finish
