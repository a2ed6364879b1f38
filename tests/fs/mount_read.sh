#!/bin/bash
# Every fixture frame and Bloscpack file, mounted, reads to its manifest sha256 with
# cat, and byte ranges at random offsets and sizes (dd, Python os.pread) match.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
need_fuse

cp "$DATA"/*.b2frame "$BACK"/
cp "$DATA"/bloscpack/*.blp "$BACK"/
mount_b2fs -o ro || { fail "mount"; finish; exit 1; }

# rows: file nbytes sha256 (both manifests)
rows=$( (tail -n +2 "$DATA/MANIFEST.tsv"; tail -n +2 "$DATA/bloscpack/MANIFEST.tsv") | cut -f1-3)
RANDOM=5
while IFS=$'\t' read -r file nbytes sha; do
    [ -f "$BACK/$file" ] || continue
    shown=${file%.b2frame}
    shown=${shown%.blp}
    m="$MNT/$shown"
    size=$(stat -c %s "$m" 2>/dev/null)
    check "$shown: ls shows the decompressed size $nbytes" [ "$size" = "$nbytes" ]
    got=$(cat "$m" | sha256sum | cut -d' ' -f1)
    check "$shown: cat gives the manifest sha256" [ "$got" = "$sha" ]
    # byte ranges, checked against the whole contents verified just above
    cat "$m" >"$WORK/whole"
    bad=0
    for i in 1 2 3 4 5 6; do
        [ "$nbytes" -gt 0 ] || break
        off=$(( (RANDOM * 32768 + RANDOM) % nbytes ))
        len=$(( (RANDOM * 32768 + RANDOM) % 300000 + 1 ))
        a=$(dd if="$m" bs=1 skip="$off" count="$len" iflag=skip_bytes,count_bytes status=none | sha256sum)
        b=$(tail -c +$((off + 1)) "$WORK/whole" | head -c "$len" | sha256sum)
        [ "$a" = "$b" ] || { bad=1; echo "dd $shown off=$off len=$len differs"; }
    done
    check "$shown: dd at random offsets and sizes" [ $bad -eq 0 ]
    check "$shown: os.pread at random offsets" /usr/bin/python3 - "$m" "$WORK/whole" <<'PY'
import os, random, sys
random.seed(7)
m, ref = sys.argv[1], open(sys.argv[2], 'rb').read()
fd = os.open(m, os.O_RDONLY)
for _ in range(200):
    off = random.randrange(0, max(1, len(ref) + 100))
    n = random.choice([1, 7, 4096, 65536, 300001, random.randrange(1, 2000000)])
    if os.pread(fd, n, off) != ref[off:off + n]:
        print("pread differs at", off, n); sys.exit(1)
PY
done <<<"$rows"

check "backing files are untouched by reading" [ -z "$(cd "$BACK" && for f in *; do
    src="$DATA/$f"; [ -f "$src" ] || src="$DATA/bloscpack/$f"; cmp -s "$f" "$src" || echo "$f"; done)" ]
unmount_b2fs
check "no errors logged" [ -z "$(grep -v mounted "$WORK/b2fs.log")" ] || cat "$WORK/b2fs.log"
finish
