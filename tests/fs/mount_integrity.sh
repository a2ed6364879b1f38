#!/bin/bash
# Checksums: frames written through the mount carry them (b2frame verify checks them);
# single bits flipped at random in such frames (lz4, lz4hc, blosclz, zstd, zlib, each with
# and without shuffle) read through the mount as EIO or as the right bytes, never as other
# bytes, and the daemon stays up; a damaged block gives EIO to the reads that touch it
# only, one log line naming file, chunk and block, and a count in user.blosc2.integrity;
# damage to the index or trailer makes the whole file EIO with a log line; frames by
# C-Blosc2 (none, or chunks it appended or rewrote in a b2fs frame, or a metalayer it
# rewrote in place) read as before, unverified; b2frame seal gives them checksums;
# b2frame scrub finds the damaged files of a tree; checksums=off writes none.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
PY=/usr/bin/python3
command -v getfattr >/dev/null || skip_all "getfattr (package attr) is not installed"
need_fuse
[ -x "$B2FRAME" ] || skip_all "b2frame is not built ($B2FRAME)"
export B2FRAME
ID="$top_srcdir/tests/data/integrity"
FLIPS=${FLIPS:-150}
integ() { $PY "$top_srcdir/tests/fs/mount_integrity.py" "$@"; }
attr() { getfattr --only-values -n user.blosc2.integrity "$1" 2>/dev/null; }
field() { attr "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
nlog() { grep -c -- "$1" "$WORK/b2fs.log"; }
flip_at() {  # FILE POS BIT
    local byte
    byte=$(od -An -tu1 -j"$2" -N1 "$1" | tr -d ' ')
    printf "\\$(printf %03o $((byte ^ (1 << $3))))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

$PY -c "
import struct, math, sys
sys.stdout.buffer.write(b''.join(struct.pack('<f', math.sin(i / 700.0) * 50 + (i % 13) * 0.125)
                                 for i in range(150000)))" >"$WORK/series"
mount_b2fs -o chunksize=128K,typesize=4 || { fail "mount"; finish; exit 1; }
dirs=
for codec in lz4 lz4hc blosclz zstd zlib; do
    for filters in shuffle none; do
        d=$codec-$filters
        mkdir "$MNT/$d"
        setfattr -n user.blosc2.codec -v $codec "$MNT/$d"
        setfattr -n user.blosc2.filters -v $filters "$MNT/$d"
        cp "$WORK/series" "$MNT/$d/series"
        dirs="$dirs $d"
    done
done
check "written through the mount: every file reads back" \
    sh -c 'for d in $2; do cmp "$1/$d/series" "$3" || exit 1; done' sh "$MNT" "$dirs" "$WORK/series"
unmount_b2fs || fail "unmount"

all_sealed() {
    local d out
    for d in $dirs; do
        out=$("$B2FRAME" verify "$BACK/$d/series.b2frame") || return 1
        grep -q "checked against checksums; header, index and trailer by fingerprint" <<<"$out" ||
            { echo "$out"; return 1; }
    done
}
check "every frame has checksums on every chunk and a fingerprint (b2frame verify)" all_sealed
check "b2frame info says so" grep -q "^checksums: 5 of 5 stored chunks" \
    <("$B2FRAME" info "$BACK/zstd-shuffle/series.b2frame")

mount_b2fs || { fail "remount"; finish; exit 1; }
check "user.blosc2.integrity of a sealed file" \
    [ "$(attr "$MNT/zstd-shuffle/series")" = "checked=yes sealed=yes chunks=5 summed=5 damaged=0" ]
check "$FLIPS random bit flips for each codec and filter: EIO or the right bytes, never others" \
    integ flips "$MNT" "$BACK" "$FLIPS" 7 $dirs
check "the daemon is still up" grep -q " $MNT fuse.b2fs " /proc/mounts
check "... and serves the undamaged files" cmp "$MNT/zstd-shuffle/series" "$WORK/series"

# one flipped bit in chunk 1: reads of it fail, reads of chunks 0 and 2 work
F=$BACK/zstd-shuffle/one.b2frame
cp "$BACK/zstd-shuffle/series.b2frame" "$F"
read -r at len < <(integ chunk "$F" 1)
flip_at "$F" $((at + len * 3 / 4)) 2
O=$MNT/zstd-shuffle/one
check "chunk 0 still reads" cmp <(head -c 131072 "$O") <(head -c 131072 "$WORK/series")
check "chunk 2 still reads" cmp <(tail -c +262145 "$O") <(tail -c +262145 "$WORK/series")
check "a read in chunk 1 gives EIO" not dd if="$O" of=/dev/null bs=4096 skip=40 count=24 status=none
check "... and cat of the file fails" not cat "$O" >/dev/null
check "one log line names the file, chunk 1 and the block" \
    [ "$(nlog "one.b2frame: chunk 1, block [0-9]*: checksum mismatch")" = 1 ]
vblock=$("$B2FRAME" verify "$F" 2>&1 | sed -n 's/.*chunk 1, block \([0-9]*\):.*/\1/p')
check "... the block b2frame verify names too ($vblock)" \
    grep -q "one.b2frame: chunk 1, block $vblock: checksum mismatch" "$WORK/b2fs.log"
check "user.blosc2.integrity counts the failed reads" [ "$(field "$O" damaged)" -ge 2 ]
check "b2frame verify fails on it" not "$B2FRAME" verify -q "$F"

# the header and the index: a flip there makes the whole file EIO at open
cp "$BACK/zstd-shuffle/series.b2frame" "$BACK/zstd-shuffle/idx.b2frame"
hl=$((16#$(od -An -tx1 -j11 -N4 "$F" | tr -d ' \n')))
cb=$((16#$(od -An -tx1 -j39 -N8 "$F" | tr -d ' \n')))
flip_at "$BACK/zstd-shuffle/idx.b2frame" $((hl + cb + 20)) 0
check "a flip in the index: EIO" not cat "$MNT/zstd-shuffle/idx" >/dev/null
check "... with a log line" [ "$(nlog "idx.b2frame: does not open")" = 1 ]
cp "$BACK/zstd-shuffle/series.b2frame" "$BACK/zstd-shuffle/hdr.b2frame"
flip_at "$BACK/zstd-shuffle/hdr.b2frame" 56 1   # the blocksize: a field nothing else checks
check "a flip in a header field nothing else checks: EIO" not cat "$MNT/zstd-shuffle/hdr" >/dev/null
check "... logged as a fingerprint mismatch" [ "$(nlog "hdr.b2frame: does not open.*fingerprint mismatch")" = 1 ]
check "... and b2frame verify says so" grep -q "fingerprint mismatch" \
    <("$B2FRAME" verify "$BACK/zstd-shuffle/hdr.b2frame" 2>&1)
cp "$BACK/zstd-shuffle/series.b2frame" "$BACK/zstd-shuffle/type.b2frame"
flip_at "$BACK/zstd-shuffle/type.b2frame" $(($(stat -c %s "$BACK/zstd-shuffle/type.b2frame") - 17)) 0
check "a flip in the fingerprint's type byte: EIO" not cat "$MNT/zstd-shuffle/type" >/dev/null
check "... logged" [ "$(nlog "type.b2frame: does not open.*fingerprint type")" = 1 ]

# a small frame: no table of checksums, a fingerprint of all of it; damage anywhere in it
# makes the whole file EIO
head -c 20000 "$top_srcdir/README.md" >"$WORK/small"
cp "$WORK/small" "$MNT/zstd-shuffle/small"
unmount_b2fs || fail "unmount"
S=$BACK/zstd-shuffle/small.b2frame
check "a small file's frame: a fingerprint of the whole frame (b2frame info)" \
    grep -q "^fingerprint: yes (the whole frame)" <("$B2FRAME" info "$S")
check "... and no table of checksums: no vlmetalayer" grep -q "^vlmetalayers: 0" <("$B2FRAME" info "$S")
check "... b2frame verify checks it so" grep -q "1 of 1 stored ones checked against checksums; the whole frame by fingerprint" \
    <("$B2FRAME" verify "$S")
# header 97, the 35 bytes of the empty frame's trailer it was created with, index 40,
# trailer 35 (no vlmetalayer)
check "... 207 bytes of frame around its compressed bytes at most" \
    [ $(($(stat -c %s "$S") - $("$B2FRAME" info "$S" | sed -n 's/^cbytes: //p'))) -le 207 ]
shl=$((16#$(od -An -tx1 -j11 -N4 "$S" | tr -d ' \n')))
for part in chunk fingerprint; do
    cp "$S" "$BACK/zstd-shuffle/small-$part.b2frame"
    [ $part = chunk ] && at=$((shl + 100)) || at=$(($(stat -c %s "$S") - 5))
    flip_at "$BACK/zstd-shuffle/small-$part.b2frame" $at 3
done
mount_b2fs || { fail "remount"; finish; exit 1; }
check "the small file reads" cmp "$MNT/zstd-shuffle/small" "$WORK/small"
check "user.blosc2.integrity: sealed, its chunk checked" \
    [ "$(attr "$MNT/zstd-shuffle/small")" = "checked=yes sealed=yes chunks=1 summed=1 damaged=0" ]
for part in chunk fingerprint; do
    check "a flip in the small frame's $part: EIO" not cat "$MNT/zstd-shuffle/small-$part" >/dev/null
    check "... logged as a whole-frame fingerprint mismatch" \
        [ "$(nlog "small-$part.b2frame: does not open.*whole-frame fingerprint mismatch")" = 1 ]
    check "... and b2frame verify fails on it" not "$B2FRAME" verify -q "$BACK/zstd-shuffle/small-$part.b2frame"
done
rm -f "$BACK"/zstd-shuffle/small-*.b2frame

# scrub: the damaged files of a tree, with an exit status for cron
out=$("$B2FRAME" scrub "$BACK" 2>"$WORK/scrub.err"); rc=$?
check "b2frame scrub exits 1 on damage" [ $rc = 1 ]
check "... and names the four damaged files" [ "$(grep -c '^damaged: ' <<<"$out")" = 4 ]
check "... one of them one.b2frame" grep -q 'damaged: .*/one.b2frame' <<<"$out"
check "... with chunk and block on stderr" grep -q "one.b2frame: chunk 1, block $vblock" "$WORK/scrub.err"
rm -f "$F" "$BACK"/zstd-shuffle/{idx,hdr,type}.b2frame
check "b2frame scrub exits 0 on a sound tree" "$B2FRAME" scrub -q "$BACK"

# frames by C-Blosc2 3.3: without checksums, and b2fs frames that C-Blosc2 changed
mkdir "$BACK/cb"
cp "$DATA/f32-zstd5-bitshuffle-t4-c262144.b2frame" "$ID"/*.b2frame "$ID"/*.b2nd "$BACK/cb/"
chmod u+w "$BACK"/cb/*
sha() { sha256sum <"$1" | cut -d' ' -f1; }
manifest() { awk -v f="$1" '$1 == f { print $2 }' "$ID/MANIFEST.tsv"; }
check "a C-Blosc2 frame reads as before" [ "$(sha "$MNT/cb/f32-zstd5-bitshuffle-t4-c262144")" = \
    "$(awk '$1 == "f32-zstd5-bitshuffle-t4-c262144.b2frame" { print $3 }' "$DATA/MANIFEST.tsv")" ]
check "... unverified" [ "$(field "$MNT/cb/f32-zstd5-bitshuffle-t4-c262144" summed)" = 0 ]
for x in appended updated; do
    check "$x by C-Blosc2: reads C-Blosc2's bytes" \
        [ "$(sha "$MNT/cb/$x")" = "$(manifest $x.b2frame)" ]
done
check "appended: changed since b2fs wrote it, so every chunk reads unverified" \
    [ "$(field "$MNT/cb/appended" summed)/$(field "$MNT/cb/appended" chunks)/$(field "$MNT/cb/appended" sealed)" = 0/5/no ]
check "updated in place: the same" [ "$(field "$MNT/cb/updated" summed)" = 0 ]
check "a metalayer C-Blosc2 rewrote in place: the array reads with it" $PY -c '
import numpy as np, sys
a = np.load(sys.argv[1])
assert a.dtype == np.dtype("<u4") and a.shape == (300, 200), (a.dtype, a.shape)
assert (a == np.arange(60000, dtype="<u4").reshape(300, 200) * 7).all()' "$MNT/cb/arr-meta.npy"
check "... and user.blosc2.integrity says its metalayers changed" \
    grep -q " metalayers=changed$" <(attr "$MNT/cb/arr-meta.npy")
check "a write to a C-Blosc2 frame gives the chunk written checksums" \
    sh -c 'printf abcd | dd of="$1" bs=1 seek=5 conv=notrunc status=none && sync "$1"' \
    sh "$MNT/cb/f32-zstd5-bitshuffle-t4-c262144"
unmount_b2fs || fail "unmount"
check "... and the frame a fingerprint" grep -q "^fingerprint: yes" \
    <("$B2FRAME" info "$BACK/cb/f32-zstd5-bitshuffle-t4-c262144.b2frame")
check "b2frame seal gives every chunk of appended checksums" \
    "$B2FRAME" seal "$BACK/cb/appended.b2frame"
check "... verify checks all 5 chunks now" grep -q "5 of 5 stored ones checked" \
    <("$B2FRAME" verify "$BACK/cb/appended.b2frame")
check "... same bytes" [ "$("$B2FRAME" cat "$BACK/cb/appended.b2frame" | sha256sum | cut -d' ' -f1)" = \
    "$(manifest appended.b2frame)" ]
check "b2frame verify of a metalayer changed in place says so" \
    grep -q "metalayers changed" <("$B2FRAME" verify "$BACK/cb/arr-meta.b2nd" 2>&1)

# checksums=off: nothing written
mount_b2fs -o checksums=off || fail "mount with checksums=off"
cp "$WORK/series" "$MNT/plain"
check "checksums=off: user.blosc2.integrity says unchecked" \
    [ "$(field "$MNT/plain" checked)" = no ]
unmount_b2fs || fail "unmount"
check "checksums=off: the frame has none" grep -q "^checksums: 0 of 1 stored chunks" \
    <("$B2FRAME" info "$BACK/plain.b2frame")
check "b2fs --help tells of checksums=" grep -q "checksums=on|off" <("$B2FS" --help)
finish
