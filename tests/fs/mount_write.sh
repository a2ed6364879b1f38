#!/bin/bash
# cp of a 256 MiB generated file and of a tree of real files (/usr/include) into the
# mount and back out gives identical bytes; after unmount the backing files are valid
# frames (b2frame verify) that decode to the same bytes; a remount reads them back.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
need_fuse

SRC=$WORK/src
mkdir -p "$SRC" "$WORK/out"
# text-like and binary parts, 256 MiB, deterministic
{ seq 1 25000000; head -c 64M /dev/zero; } | head -c 256M >"$SRC/big"
# a small tree: every size class, including empty and one-byte files
TREE=/usr/include
[ -d "$TREE/linux" ] && TREE=/usr/include/linux
cp -a "$TREE" "$SRC/tree"
: >"$SRC/tree/empty-file"
printf x >"$SRC/tree/one-byte"
head -c 1048576 /dev/urandom >"$SRC/tree/exactly-one-chunk"
head -c 1048577 /dev/urandom >"$SRC/tree/one-chunk-and-a-byte"

mount_b2fs -o codec=zstd,clevel=1,chunksize=1M || { fail "mount"; finish; exit 1; }
check "cp of 256 MiB into the mount" cp "$SRC/big" "$MNT/big"
check "it reads back identical" cmp "$SRC/big" "$MNT/big"
check "ls -l shows 256 MiB" [ "$(stat -c %s "$MNT/big")" = $((256 << 20)) ]
check "cp -r of $TREE into the mount" cp -r "$SRC/tree" "$MNT/tree"
check "diff -r of the tree" diff -r "$SRC/tree" "$MNT/tree"
check "cp back out" cp -r "$MNT/tree" "$WORK/out/tree"
check "copied out identical" diff -r "$SRC/tree" "$WORK/out/tree"
# (compressed once idle for 2 s: on 2 cores zstd takes a few seconds more)
du_small() {
    local i
    for i in $(seq 1 600); do
        [ "$(du -k "$MNT/big" | cut -f1)" -lt 204800 ] && return 0
        sleep 0.1
    done
    return 1
}
check "du shows the compressed size once it is idle (< 200 MiB of 256)" du_small
unmount_b2fs

check "backing file of big is a frame" [ -f "$BACK/big.b2frame" ]
check "b2frame verify: big" frame_sealed "$BACK/big.b2frame"
bad=0; n=0
while IFS= read -r -d '' f; do
    n=$((n + 1))
    rel=${f#"$BACK/tree/"}
    frame_sealed "$f" || { bad=$((bad + 1)); echo "verify failed: $rel"; continue; }
    if [ -x "$B2FRAME" ]; then
        "$B2FRAME" cat "$f" | cmp -s - "$SRC/tree/${rel%.b2frame}" || { bad=$((bad + 1)); echo "decodes differently: $rel"; }
    fi
done < <(find "$BACK/tree" -type f -name '*.b2frame' -print0)
check "all $n tree frames verify and decode to the original bytes" [ $bad -eq 0 -a $n -gt 10 ]
# C-Blosc2 itself, when its reference tool is around (outside the repository)
B2REF=${B2REF:-/tmp/ref/bin/b2ref}
if [ -x "$B2REF" ]; then
    bad=0
    while IFS= read -r -d '' f; do
        rel=${f#"$BACK/tree/"}
        "$B2REF" cat "$f" 2>/dev/null | cmp -s - "$SRC/tree/${rel%.b2frame}" || { bad=$((bad + 1)); echo "C-Blosc2 reads differently: $rel"; }
    done < <(find "$BACK/tree" -type f -name '*.b2frame' -print0)
    check "C-Blosc2 ($B2REF) decodes every tree frame to the original bytes" [ $bad -eq 0 ]
else
    echo "note: $B2REF not found: C-Blosc2 read-back not checked"
fi
check "no temporary files left" [ -z "$(find "$BACK" -name '.b2fs-tmp-*')" ]

mount_b2fs || { fail "remount"; finish; exit 1; }
check "after remount: big identical" cmp "$SRC/big" "$MNT/big"
check "after remount: tree identical" diff -r "$SRC/tree" "$MNT/tree"
unmount_b2fs
finish
