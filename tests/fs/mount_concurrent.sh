#!/bin/bash
# Two processes reading the same file and four reading different files at once all
# get the right bytes (multithreaded FUSE loop, shared block cache, read-ahead).
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
need_fuse

mount_b2fs -o cache_size=4M,chunksize=256K || { fail "mount"; finish; exit 1; }
for i in 1 2 3 4; do
    seq $((i * 1000000)) $((i * 1000000 + 1500000)) >"$WORK/src$i"
    cp "$WORK/src$i" "$MNT/f$i"
done
remount_b2fs -o cache_size=4M || { fail "remount"; finish; exit 1; }

reader() {  # file reference: several passes with different read sizes
    local bs
    for bs in 4k 128k 1M 7k; do
        dd if="$1" bs=$bs status=none | cmp -s - "$2" || { echo "differs: $1 bs=$bs"; return 1; }
    done
}
reader "$MNT/f1" "$WORK/src1" & p1=$!
reader "$MNT/f1" "$WORK/src1" & p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
check "2 processes reading the same file" [ $r1 -eq 0 -a $r2 -eq 0 ]

pids=()
for i in 1 2 3 4; do reader "$MNT/f$i" "$WORK/src$i" & pids+=($!); done
bad=0
for p in "${pids[@]}"; do wait "$p" || bad=1; done
check "4 processes reading 4 files" [ $bad -eq 0 ]

check "random preads from 4 threads" /usr/bin/python3 - "$MNT" "$WORK" <<'PY'
import os, random, sys, threading
mnt, work = sys.argv[1], sys.argv[2]
errors = []
def run(i):
    rng = random.Random(i)
    ref = open("%s/src%d" % (work, i), "rb").read()
    fd = os.open("%s/f%d" % (mnt, i), os.O_RDONLY)
    for _ in range(300):
        off, n = rng.randrange(len(ref)), rng.randrange(1, 200000)
        if os.pread(fd, n, off) != ref[off:off + n]:
            errors.append((i, off, n))
threads = [threading.Thread(target=run, args=(i,)) for i in (1, 2, 3, 4)]
for t in threads: t.start()
for t in threads: t.join()
sys.exit(1 if errors else 0)
PY
# a writer and sequential readers on the same file at once (read-ahead and compression
# share the workers): nothing hangs, and the end result is right
cat "$WORK"/src1 "$WORK"/src2 "$WORK"/src3 >"$WORK/src5"
cp "$WORK/src1" "$MNT/f5"
( for i in 1 2 3 4 5 6; do cat "$MNT/f5" >/dev/null; done ) & rp=$!
timeout 120 cp "$WORK/src5" "$MNT/f5"; wr=$?
timeout 120 dd if="$WORK/src5" of="$MNT/f5" bs=64k conv=notrunc status=none; wr2=$?
wait $rp
check "a writer beside readers finishes" [ $wr -eq 0 -a $wr2 -eq 0 ]
check "  ... with the right contents" cmp "$WORK/src5" "$MNT/f5"
unmount_b2fs
finish
