#!/bin/bash
# Frames of variable-size chunks (written by C-Blosc2, tests/data/variable) take writes
# through the mount: b2fs first rewrites such a file with fixed-size chunks (renamed into
# place). Writes inside a chunk, across old and new chunk boundaries, into a zero run,
# appends, holes and truncates are checked against the same operations on a plain copy;
# the backing file stays a valid frame with its metalayers, vlmetalayers and xattrs; a
# reader that had the file open sees the new bytes; a remount reads the same bytes.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/mount_lib.sh"
need_fuse
[ -x "$B2FRAME" ] || skip_all "b2frame is not built ($B2FRAME)"

DATA=$top_srcdir/tests/data/variable
F=var-zstd5-shuffle-t8-meta   # chunks 65536 20000 131072(zeros) 40000 8; metalayers
G=var-lz45-bitshuffle-t4      # chunks 1000 50000 3000 12 100000
H=var-blosclz5-none-t1        # read only here: must stay untouched
PLAIN=$WORK/plain
mkdir -p "$PLAIN"
for x in $F $G $H; do
    cp "$DATA/$x.b2frame" "$BACK/"
    "$B2FRAME" cat "$BACK/$x.b2frame" >"$PLAIN/$x"
done
check "the fixtures have variable-size chunks" \
    grep -q "chunksize: variable" <("$B2FRAME" info "$BACK/$F.b2frame")
xattrs_ok=0
if setfattr -n user.note -v kept "$BACK/$F.b2frame" 2>/dev/null; then xattrs_ok=1; fi
H_SUM=$(sha256sum <"$BACK/$H.b2frame")

# put FILE OFF LEN SEED: the same bytes at OFF in the mounted file and in its plain copy
put() {
    head -c "$3" <(yes "$4 $2 $3 rechunk" | tr -d '\n') >"$WORK/piece"
    dd if="$WORK/piece" of="$MNT/$1" bs=65536 seek="$2" oflag=seek_bytes conv=notrunc \
        status=none || return 1
    dd if="$WORK/piece" of="$PLAIN/$1" bs=65536 seek="$2" oflag=seek_bytes conv=notrunc \
        status=none
}
same() { cmp "$MNT/$1" "$PLAIN/$1"; }

mount_b2fs || { fail "mount"; finish; exit 1; }
check "reads before any write" same $F
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

for x in $F $G; do
    check "b2frame verify: $x" frame_ok "$BACK/$x.b2frame"
    check "$x: fixed-size chunks now" not grep -q "chunksize: variable" <("$B2FRAME" info "$BACK/$x.b2frame")
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
check "b2frame verify after the second mount" frame_ok "$BACK/$F.b2frame"
finish
