#!/bin/bash
# push_blocks: a block decoded for a random read goes whole into the kernel's page cache.
# Random reads then decode each block once (user.blosc2.decoded counts them, with a block
# cache too small to help), read the right bytes, and never show old bytes after a write,
# a truncate or a rewrite, also to descriptors opened before and to mmap. Built with
# --enable-tsan (contrib/run-tests' ThreadSanitizer stage) the daemon logs no report.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
need_fuse
PY=/usr/bin/python3
command -v getfattr >/dev/null || skip_all "getfattr (package attr) is not installed"

# 8 MiB of text-like data: 128 blocks of 64 KiB, compressible, every 4 KiB page different
$PY -c "
import sys
out = bytearray()
i = 0
while len(out) < 8 << 20:
    out += b'line %08d of the pushed file, page %06d\n' % (i, len(out) // 4096)
    i += 1
sys.stdout.buffer.write(bytes(out[:8 << 20]))
" >"$WORK/src"
decoded() { getfattr --absolute-names --only-values -n user.blosc2.decoded "$1" | sed 's/blocks=\([0-9]*\).*/\1/'; }
# random_reads FILE MODEL COUNT SEED: preads of 4 KiB at random page offsets, each
# compared with MODEL; prints the number that differed
random_reads() {
    $PY - "$@" <<'EOF'
import os, random, sys
path, model, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
want = open(model, "rb").read()
rng = random.Random(seed)
fd = os.open(path, os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)   # 4 KiB a request, no read-ahead
bad = 0
for _ in range(count):
    off = rng.randrange(0, len(want) // 4096) * 4096
    if os.pread(fd, 4096, off) != want[off:off + 4096]:
        bad += 1
os.close(fd)
print(bad)
EOF
}

for mode in on off; do
    mount_b2fs -o push_blocks=$mode,cache_size=256K || { fail "mount push_blocks=$mode"; continue; }
    cp "$WORK/src" "$MNT/f"
    remount_b2fs -o push_blocks=$mode,cache_size=256K || { fail "remount"; continue; }
    check "push_blocks=$mode: 3000 random 4 KiB reads give the file's bytes" \
        [ "$(random_reads "$MNT/f" "$WORK/src" 3000 1)" = 0 ]
    eval "first_$mode=$(decoded "$MNT/f")"
    sleep 1   # the last pushes land
    check "push_blocks=$mode: 3000 more give the file's bytes" \
        [ "$(random_reads "$MNT/f" "$WORK/src" 3000 7)" = 0 ]
    eval "second_$mode=\$(( $(decoded "$MNT/f") - first_$mode ))"
    unmount_b2fs
done
echo "blocks decoded for 3000 random reads, then 3000 more: push_blocks=on $first_on, $second_on; off $first_off, $second_off"
# The first pass decodes each of the 128 blocks about once with push_blocks=on (128 to 150
# on a quiet machine); a read can reach a block before its push has and decode it again,
# more often when the daemon is slow (271 once under ThreadSanitizer, 457 once in `make -j2
# check` beside other heavy work), so that pass is only held to a third of what it costs
# without pushing. The second pass, once every
# block has been pushed, must find its pages in the kernel's cache: 0 decodes seen on a
# quiet machine, 12 once under ThreadSanitizer (the pusher drops a block when 32 wait,
# MAX_QUEUED, and a slow daemon's reads outrun it), so held to a tenth of what it costs
# without pushing.
check "with push_blocks=on the first pass decodes a third or less of what it does without" \
    [ $((first_on * 3)) -le "$first_off" ]
check "... and the second pass decodes a tenth or less: the pushed blocks are in the page cache" \
    [ $((second_on * 10)) -le "$second_off" ]
# without it every page not read before costs a decode: about 1550 in the first pass and,
# of the second's pages, the fifth or so that the first did not read (about 360)
check "... where without it every page not read before costs a decode" \
    [ "$first_off" -ge 1000 -a "$second_off" -ge 200 ]

# coherence: pages pushed, then changed through the mount
mount_b2fs -o cache_size=256K || { fail "mount"; finish; exit 1; }
cp "$WORK/src" "$WORK/model"
cp "$WORK/src" "$MNT/g"
remount_b2fs -o cache_size=256K || fail "remount"
exec 7<"$MNT/g"   # a descriptor opened before the changes
check "random reads push the blocks in" [ "$(random_reads "$MNT/g" "$WORK/model" 2000 2)" = 0 ]
# rewrite a few bytes in the middle of many blocks, through a writable open
$PY - "$MNT/g" "$WORK/model" <<'EOF'
import os, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDWR)
    for k in range(128):
        os.pwrite(fd, b"CHANGED %03d" % k, k * 65536 + 12345)
    os.close(fd)
EOF
check "after a write the new bytes show to random reads" [ "$(random_reads "$MNT/g" "$WORK/model" 2000 3)" = 0 ]
check "... and to a whole read" cmp "$MNT/g" "$WORK/model"
check "... and through the descriptor opened before" \
    $PY -c "import os,sys; d=os.read(7, 1) or True; sys.exit(os.pread(7, 16, 5*65536+12345)[:11] != b'CHANGED 005')"
check "... and through mmap" $PY -c "
import mmap, sys
with open('$MNT/g', 'rb') as f:
    m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    sys.exit(m[7 * 65536 + 12345:7 * 65536 + 12356] != b'CHANGED 007')"
exec 7<&-
random_reads "$MNT/g" "$WORK/model" 2000 4 >/dev/null
truncate -s 3000000 "$MNT/g"
truncate -s 3000000 "$WORK/model"
truncate -s 5000000 "$MNT/g"
truncate -s 5000000 "$WORK/model"
check "after truncate (by path) down and up the bytes past the cut read as zeros" cmp "$MNT/g" "$WORK/model"
random_reads "$MNT/g" "$WORK/model" 2000 5 >/dev/null
head -c 5000000 "$WORK/src" | tr 'a-z' 'A-Z' >"$WORK/model"
cp "$WORK/model" "$MNT/g"
check "after the file is rewritten by cp the new bytes show" [ "$(random_reads "$MNT/g" "$WORK/model" 2000 6)" = 0 ]

# a reader pushing blocks all the while a writer changes the file: after each close, a
# long-open descriptor and a new one read the writer's bytes
cp "$WORK/src" "$WORK/model"
cp "$WORK/src" "$MNT/h"
check "random reads while a writer changes the file never leave old bytes behind" $PY - "$MNT/h" "$WORK/model" <<'EOF'
import os, random, sys, threading
path, model = sys.argv[1], sys.argv[2]
want = bytearray(open(model, "rb").read())
stop = False
def reader():
    fd = os.open(path, os.O_RDONLY)
    rng = random.Random(9)
    while not stop:
        os.pread(fd, 4096, rng.randrange(0, len(want) // 4096) * 4096)
    os.close(fd)
t = threading.Thread(target=reader)
t.start()
rng = random.Random(10)
old = os.open(path, os.O_RDONLY)
bad = 0
for round in range(40):
    fd = os.open(path, os.O_RDWR)
    for _ in range(8):
        off = rng.randrange(0, len(want) - 100)
        data = b"round %02d " % round
        os.pwrite(fd, data, off)
        want[off:off + len(data)] = data
    os.close(fd)
    for _ in range(200):
        off = rng.randrange(0, len(want) // 4096) * 4096
        if os.pread(old, 4096, off) != want[off:off + 4096]:
            bad += 1
stop = True
t.join()
fresh = os.open(path, os.O_RDONLY)
whole = b"".join(os.pread(fresh, 1 << 20, o) for o in range(0, len(want), 1 << 20))
print("stale pages seen:", bad, "whole file right:", whole == want)
sys.exit(bad != 0 or whole != want)
EOF
unmount_b2fs
check "no ThreadSanitizer report in the daemon's log" not grep -q "ThreadSanitizer" "$WORK/b2fs.log"
check "the frames are valid" sh -c 'for f in g h; do "$2" verify -q "$1/$f.b2frame" || exit 1; done' sh "$BACK" "$B2FRAME"
finish
