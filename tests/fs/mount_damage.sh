#!/bin/bash
# Damaged frames in the backing directory: reads that touch the damage fail with EIO,
# one log line names the file and chunk, and the mount and the other files go on.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
need_fuse

good=f64-zstd1-shuffle-t8-c1048576
cp "$DATA/$good.b2frame" "$BACK/good.b2frame"
cp "$DATA/$good.b2frame" "$BACK/chunkbad.b2frame"
head -c 1000 "$DATA/$good.b2frame" >"$BACK/truncated.b2frame"
head -c 5000 /dev/urandom >"$BACK/garbage.b2frame"
: >"$BACK/empty.b2frame"
# chunk 0's block starts overwritten (the chunk header itself stays sound)
/usr/bin/python3 - "$BACK/chunkbad.b2frame" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
i = b.find(b"\x08\x00\x00\x10\x00") - 3   # chunk 0 header: typesize 8, nbytes 1 MiB
assert i > 0
b[i + 32:i + 48] = b"\xff" * 16
open(p, "wb").write(b)
PY
sha=$(awk -F'\t' -v f="$good.b2frame" '$1 == f {print $3}' "$DATA/MANIFEST.tsv")

mount_b2fs || { fail "mount"; finish; exit 1; }
for f in truncated garbage empty chunkbad; do
    out=$(cat "$MNT/$f" 2>&1 >/dev/null)
    check "$f: cat fails with EIO" grep -q "Input/output error" <<<"$out"
done
check "ls -l of the directory works" ls -l "$MNT"
check "the good file still reads" [ "$(sha256sum <"$MNT/good" | cut -d' ' -f1)" = "$sha" ]
check "chunkbad: the other chunk still reads" \
    cmp <(tail -c +$((1048576 + 1)) "$MNT/good") <(dd if="$MNT/chunkbad" bs=1M skip=1 status=none)
check "log names the file and chunk" grep -q "chunkbad.b2frame: chunk 0" "$WORK/b2fs.log"
check "log names the garbage file" grep -q "garbage.b2frame" "$WORK/b2fs.log"
check "one line per damaged chunk" [ "$(grep -c "chunkbad.b2frame: chunk 0" "$WORK/b2fs.log")" -le 2 ]
check "writing still works" cp "$MNT/good" "$MNT/copy"
check "  ... and reads back" cmp "$MNT/good" "$MNT/copy"
check "the daemon is alive" kill -0 "$B2FS_PID"
cat "$WORK/b2fs.log"
unmount_b2fs
finish
