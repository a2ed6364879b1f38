#!/bin/bash
# Frames of variable-size chunks (written by C-Blosc2, tests/data/variable) and of chunks
# of variable-length blocks (tests/data/vlblocks) read through the mount and take writes:
# b2fs first rewrites such a file with fixed-size chunks (renamed into place). Writes
# inside a chunk, across old and new chunk boundaries, into a zero run, appends, holes and
# truncates are checked against the same operations on a plain copy;
# the backing file stays a valid frame with its metalayers, vlmetalayers and xattrs; a
# reader that had the file open sees the new bytes; a remount reads the same bytes.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
. "$top_srcdir/tests/lib/rel_lib.sh"
need_fuse
[ -x "$B2FRAME" ] || skip_all "b2frame is not built ($B2FRAME)"

VDATA=$top_srcdir/tests/data/variable
F=var-zstd5-shuffle-t8-meta   # chunks 65536 20000 131072(zeros) 40000 8; metalayers
G=var-lz45-bitshuffle-t4      # chunks 1000 50000 3000 12 100000
H=var-blosclz5-none-t1        # read only here: must stay untouched
PLAIN=$WORK/plain
mkdir -p "$PLAIN"
for x in $F $G $H; do
    cp "$VDATA/$x.b2frame" "$BACK/"
    "$B2FRAME" cat "$BACK/$x.b2frame" >"$PLAIN/$x"
done
check "the fixtures have variable-size chunks" \
    grep -q "chunksize: variable" <("$B2FRAME" info "$BACK/$F.b2frame")
xattrs_ok=0
if setfattr -n user.note -v kept "$BACK/$F.b2frame" 2>/dev/null; then xattrs_ok=1; fi
H_SUM=$(sha256sum <"$BACK/$H.b2frame")

# put FILE OFF LEN SEED: the same bytes at OFF in the mounted file (under $MNT, or $ON)
# and in its plain copy
put() {
    head -c "$3" <(yes "$4 $2 $3 rechunk" | tr -d '\n') >"$WORK/piece"
    dd if="$WORK/piece" of="${ON:-$MNT}/$1" bs=65536 seek="$2" oflag=seek_bytes conv=notrunc \
        status=none || return 1
    dd if="$WORK/piece" of="$PLAIN/$1" bs=65536 seek="$2" oflag=seek_bytes conv=notrunc \
        status=none
}
put_on() { local ON=$1; shift; put "$@"; }
same() { cmp "$MNT/$1" "$PLAIN/$1"; }

mount_b2fs || { fail "mount"; finish; exit 1; }
check "reads before any write" same $F
bad=0
while IFS=$'\t' read -r file nbytes sha rest; do
    [ "$file" = file ] && continue
    cp "$VDATA/$file" "$BACK/ro-$file"
    [ "$(sha256sum <"$MNT/ro-${file%.b2frame}" | cut -c1-64)" = "$sha" ] || { bad=$((bad + 1)); echo "$file reads wrong"; }
done <"$VDATA/MANIFEST.tsv"
check "every variable-chunk fixture reads to its manifest sha256" [ $bad -eq 0 ]
VLDATA=$top_srcdir/tests/data/vlblocks
bad=0
while IFS=$'\t' read -r file nbytes sha rest; do
    [ "$file" = file ] && continue
    cp "$VLDATA/$file" "$BACK/ro-$file"
    [ "$(sha256sum <"$MNT/ro-${file%.b2frame}" | cut -c1-64)" = "$sha" ] || { bad=$((bad + 1)); echo "$file reads wrong"; }
    [ "$(stat -c %s "$MNT/ro-${file%.b2frame}")" = "$nbytes" ] || { bad=$((bad + 1)); echo "$file: wrong size"; }
done <"$VLDATA/MANIFEST.tsv"
check "every variable-length-block fixture reads to its manifest sha256 and size" [ $bad -eq 0 ]
# random ranges of one through the mount, against the whole
check "ranges of a variable-length-block frame" /usr/bin/python3 -c "
import random, sys
r = random.Random(7)
whole = open(sys.argv[1], 'rb').read()
with open(sys.argv[1], 'rb', buffering=0) as f:
    for _ in range(300):
        off = r.randrange(len(whole) + 10); n = r.choice([1, 7, 4096, 65536, 200000])
        f.seek(off)
        if f.read(n) != whole[off:off + n]: sys.exit('range %d+%d differs' % (off, n))
" "$MNT/ro-vl-zstd5-shuffle-t4"
# writes: a frame of several chunks and one whose header gives a chunksize (one chunk)
for x in vl-lz45-none-t1-dict vl-zstd5-shuffle-t4-one; do
    cp "$VLDATA/$x.b2frame" "$BACK/"
    "$B2FRAME" cat "$BACK/$x.b2frame" >"$PLAIN/$x"
    check "$x: b2frame info names its variable-length blocks" \
        grep -q "blocks: variable-length" <("$B2FRAME" info "$BACK/$x.b2frame")
    check "$x: reads" same $x
    check "$x: write inside it" put $x 3000 100 vl
    check "$x: rewritten" grep -q "$x.b2frame: rewritten with fixed-size chunks" "$WORK/b2fs.log"
    check "$x: append" put $x "$(stat -c %s "$PLAIN/$x")" 70000 vm
    check "$x: identical" same $x
done
exec 3<"$MNT/$G"   # a reader with the file open across the rewrite
check "write inside the first chunk" put $F 1000 100 a
check "the log names the rewritten file" grep -q "$F.b2frame: rewritten with fixed-size chunks" "$WORK/b2fs.log"
check "identical after it" same $F
check "write across the old boundary at 65536" put $F 65000 2000 b
check "write across the new boundary at 131072" put $F 131000 500 c
check "write into the zero run" put $F 100000 10 d
check "write across the end" put $F 256000 1000 e
check "append" put $F 257000 70000 f
check "write past the end (a hole before it)" put $F 600000 5 g
check "identical after the writes" same $F
check "truncate to shrink" truncate -s 300001 "$MNT/$F"
truncate -s 300001 "$PLAIN/$F"
check "truncate to grow" truncate -s 700000 "$MNT/$F"
truncate -s 700000 "$PLAIN/$F"
check "identical after the truncates" same $F
check "only one rewrite logged" [ "$(grep -c "$F.b2frame: rewritten" "$WORK/b2fs.log")" = 1 ]
check "truncate of another one below its first chunk" truncate -s 999 "$MNT/$G"
truncate -s 999 "$PLAIN/$G"
check "then a write across its new chunk boundaries" put $G 500 200000 h
check "identical" same $G
check "the reader that had it open reads the new bytes" cmp <(cat <&3) "$PLAIN/$G"
exec 3<&-
check "the untouched one reads" same $H
check "fsync through the mount" /usr/bin/python3 -c "import os,sys; fd=os.open(sys.argv[1], os.O_RDWR); os.fsync(fd)" "$MNT/$F"
unmount_b2fs

for x in $F $G vl-lz45-none-t1-dict vl-zstd5-shuffle-t4-one; do
    check "b2frame verify: $x" frame_sealed "$BACK/$x.b2frame"
    check "$x: fixed-size chunks now" not grep -q "chunksize: variable" <("$B2FRAME" info "$BACK/$x.b2frame")
    check "$x: no variable-length blocks now" not grep -q "blocks: variable" <("$B2FRAME" info "$BACK/$x.b2frame")
    check "$x: decodes to the plain copy" cmp <("$B2FRAME" cat "$BACK/$x.b2frame") "$PLAIN/$x"
done
info=$("$B2FRAME" info "$BACK/$F.b2frame")
check "metalayers kept" grep -q "meta.units: 6 bytes, hex a568656c6c6f" <<<"$info"
check "vlmetalayers kept" grep -q 'vlmeta.attrs: 34 bytes, text {"sensor": "t-17", "rate_hz": 100}' <<<"$info"
if [ $xattrs_ok = 1 ]; then
    check "other xattrs kept on the backing file" [ "$(getfattr --absolute-names --only-values -n user.note "$BACK/$F.b2frame")" = kept ]
else
    echo "note: the backing file system takes no user xattrs: not checked"
fi
check "a file only read was not rewritten" [ "$(sha256sum <"$BACK/$H.b2frame")" = "$H_SUM" ]
check "no temporary files left" [ -z "$(find "$BACK" -name '.b2fs-tmp-*')" ]

mount_b2fs || { fail "remount"; finish; exit 1; }
for x in $F $G $H; do check "after remount: $x identical" same $x; done
check "writes after remount" put $F 131070 10 i
check "identical" same $F
unmount_b2fs
check "b2frame verify after the second mount" frame_sealed "$BACK/$F.b2frame"

# two mounts of one backing directory: B has the file open when A rewrites it, then each
# writes in turn; each sees the other's bytes and the file is rewritten once
cp "$VDATA/$G.b2frame" "$BACK/two.b2frame"
"$B2FRAME" cat "$BACK/two.b2frame" >"$PLAIN/two"
: >"$WORK/b2fs.log"
rel_mount_two
check "two mounts: B reads the file" cmp "$B/two" "$PLAIN/two"
exec 4<"$B/two"
check "two mounts: A writes (and rewrites it)" put_on "$A" two 70000 5000 j
sleep 1.1   # B looks for other mounts' commits at most once a second
check "two mounts: B reads A's bytes" cmp "$B/two" "$PLAIN/two"
check "two mounts: B's open reader too" cmp <(cat <&4) "$PLAIN/two"
exec 4<&-
check "two mounts: B writes" put_on "$B" two 1000 60000 k
sleep 1.1
check "two mounts: A reads B's bytes" cmp "$A/two" "$PLAIN/two"
check "two mounts: rewritten once" [ "$(grep -c "two.b2frame: rewritten" "$WORK/b2fs.log")" = 1 ]
onA rel_unmount
onB rel_unmount
MNT=$A
check "two mounts: b2frame verify" frame_sealed "$BACK/two.b2frame"
check "two mounts: it decodes to the plain copy" cmp <("$B2FRAME" cat "$BACK/two.b2frame") "$PLAIN/two"

# a backing file system too full for the rewritten copy: the write fails with ENOSPC, the
# file stays as it was and readable, no temporary file is left; with room, it works
TB=$WORK/tback
mkdir -p "$TB"
if mount -t tmpfs -o size=300k b2fs-test "$TB" 2>/dev/null; then
    cp "$VDATA/$F.b2frame" "$TB/full.b2frame"   # 191 KiB; its copy takes 137 KiB
    "$B2FRAME" cat "$TB/full.b2frame" >"$PLAIN/full"
    sum=$(sha256sum <"$TB/full.b2frame")
    SAVED=$BACK
    BACK=$TB
    mount_b2fs || fail "mount on a small tmpfs"
    out=$(printf x | dd of="$MNT/full" bs=1 seek=10 conv=notrunc status=none 2>&1); rc=$?
    echo "$out"
    check "full disk: the write fails with ENOSPC" refused $rc "$out" "No space left on device"
    check "full disk: the file is unchanged" [ "$(sha256sum <"$TB/full.b2frame")" = "$sum" ]
    check "full disk: it still reads" same full
    check "full disk: no temporary file left" [ -z "$(find "$TB" -name '.b2fs-tmp-*')" ]
    mount -o remount,size=2M "$TB"
    check "with room: the write works" put full 10 1 l
    check "with room: identical" same full
    unmount_b2fs
    check "with room: b2frame verify" frame_ok "$TB/full.b2frame"
    BACK=$SAVED
    umount "$TB"
else
    echo "note: cannot mount a small tmpfs: ENOSPC during a rewrite not checked"
fi

# kill -9 of the daemon while it rewrites a larger file: the name holds the old file or
# the new one, whole (what was written, if its close committed it, or nothing of it)
/usr/bin/python3 -c "
import struct, sys
sys.stdout.buffer.write(b''.join(struct.pack('<d', (i % 1000) * 0.25 + i // 1000) for i in range(3 << 20)))
" >"$WORK/before"
"$B2FRAME" pack --no-checksums -c zstd -l 5 -f shuffle -t 8 -s 1M "$WORK/before" "$WORK/big.b2frame" >/dev/null
# the same frame declared as one of variable-size chunks (flag 0x40, chunksize 0)
flags=$(od -An -tu1 -j25 -N1 "$WORK/big.b2frame" | tr -d ' ')
printf "\\$(printf %03o $((flags | 64)))" | dd of="$WORK/big.b2frame" bs=1 seek=25 conv=notrunc status=none
head -c 4 /dev/zero | dd of="$WORK/big.b2frame" bs=1 seek=58 conv=notrunc status=none
check "the crash test frame has variable-size chunks" \
    grep -q "chunksize: variable" <("$B2FRAME" info "$WORK/big.b2frame")
cp "$WORK/before" "$WORK/after"
printf x | dd of="$WORK/after" bs=1 seek=5 conv=notrunc status=none
crash_bad=0 hit=0
for delay in 0 0.01 0.02 0.03 0.04 0.06 0.08 0.1 0.15 0.3; do
    rm -f "$BACK"/.b2fs-tmp-*
    cp "$WORK/big.b2frame" "$BACK/big.b2frame"
    mount_b2fs || { crash_bad=$((crash_bad + 1)); break; }
    printf x | dd of="$MNT/big" bs=1 seek=5 conv=notrunc status=none 2>/dev/null &
    wpid=$!
    sleep "$delay"
    kill -KILL "$B2FS_PID"
    wait "$B2FS_PID" 2>/dev/null
    B2FS_PID=
    wait "$wpid" 2>/dev/null
    fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" 2>/dev/null
    if grep -q "chunksize: variable" <("$B2FRAME" info "$BACK/big.b2frame" 2>/dev/null) &&
        [ -n "$(find "$BACK" -name '.b2fs-tmp-*')" ]; then
        hit=$((hit + 1))   # killed during the rewrite
    fi
    "$B2FRAME" cat "$BACK/big.b2frame" >"$WORK/got" 2>/dev/null
    if ! frame_ok "$BACK/big.b2frame" || ! { cmp -s "$WORK/got" "$WORK/before" ||
        cmp -s "$WORK/got" "$WORK/after"; }; then
        crash_bad=$((crash_bad + 1)); echo "kill after ${delay}s: big.b2frame is neither file"
    fi
done
echo "note: $hit of 10 kills came while a temporary copy was being written"
check "after each kill -9 the file is the old or the new one, whole" [ $crash_bad -eq 0 ]
finish
