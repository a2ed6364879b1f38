#!/bin/bash
# Two b2fs mounts over one backing directory, writers on both mounts on the SAME file:
#  1. two mounts each rewrite one file's records (rel_torn) at once: b2frame verify
#     passes throughout and at the end, both writers run without error, every record
#     reads whole through both mounts
#  2. A and B both hold the file open; A writes chunk 0, B writes chunk 16, both fsync:
#     both writes are there (neither mount's commit reverts the other's chunks)
# REL_TWO_SECONDS (10) sets how long part 1 writes.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
. "$top_srcdir/tests/lib/rel_lib.sh"
# new files made frames at their create (not written plain first, new_plain): this suite
# looks at frames as they are written
B2FS_SUITE_OPTS=new_plain=off
need_fuse
TORN="$top_builddir/tests/reliability/rel_torn"
[ -x "$TORN" ] || skip_all "tests/reliability/rel_torn is not built"
secs=${REL_TWO_SECONDS:-10}
rel_mount_two -o chunksize=64K

rec=65536 nrecs=64
"$TORN" init "$A/torn" $rec $nrecs 0 || fail "init"
sleep 1.1
# 1. writers on both mounts on one file, b2frame verify meanwhile
"$TORN" write "$A/torn" $rec $nrecs "$secs" >"$WORK/twA.out" 2>&1 &
pids=($!)
"$TORN" write "$B/torn" $rec $nrecs "$secs" >"$WORK/twB.out" 2>&1 &
pids+=($!)
vbad=0 nv=0
while kill -0 "${pids[0]}" 2>/dev/null || kill -0 "${pids[1]}" 2>/dev/null; do
    if ! msg=$("$B2FRAME" verify "$BACK/torn.b2frame" 2>&1); then
        [ $vbad -eq 0 ] && echo "first failed verify: $msg"
        vbad=$((vbad + 1))
    fi
    nv=$((nv + 1))
done
bad=0
for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
cat "$WORK/twA.out" "$WORK/twB.out"
check "1. writers on A and B on one file: both ran ($bad failed)" [ $bad -eq 0 ]
check "1. the frame verified each time while they wrote ($vbad of $nv bad)" [ $vbad -eq 0 ]
check "1. frame valid at the end" frame_sealed "$BACK/torn.b2frame"
sleep 1.1
check "1. every record whole through A" "$TORN" read "$A/torn" $rec $nrecs 1
check "1. every record whole through B" "$TORN" read "$B/torn" $rec $nrecs 1

# 2. both hold the file open, each writes its own chunk and fsyncs
head -c 2M /dev/zero >"$A/two"
sleep 1.1
/usr/bin/python3 - "$A/two" "$B/two" <<'PY'
import os, sys
a = os.open(sys.argv[1], os.O_RDWR)
b = os.open(sys.argv[2], os.O_RDWR)
os.pwrite(a, b"A" * 65536, 0)
os.pwrite(b, b"B" * 65536, 1 << 20)
os.fsync(a)
os.fsync(b)
os.close(a)
os.close(b)
PY
sleep 1.1
for m in "$A" "$B"; do
    got=$(/usr/bin/python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); print(d[:1].decode(), d[1 << 20:(1 << 20) + 1].decode())' "$m/two")
    check "2. through $m: A's chunk 0 and B's chunk 16 both kept ($got)" [ "$got" = "A B" ]
done
check "2. frame valid" frame_sealed "$BACK/two.b2frame"
check "unmount A" onA rel_unmount
check "unmount B" onB rel_unmount
check "frames valid" rel_frames_ok "$BACK"
finish
