#!/bin/bash
# Commits behind a writer (fs/commit.c): once a writer has staged half of
# dirty_size, what it staged is committed by a thread of its own while it goes on.
# With dirty_size=4M and 64 KiB chunks, a writer that has written 12 MiB and pauses with
# the file open: the backing file is already a valid frame holding a prefix of what was
# written (C-Blosc2's view of it: b2frame verify and cat of the backing file), a reader
# through the mount reads everything written so far; b2frame verify passes every time
# while a 48 MiB cp runs; afterwards the files read back identical, the backing files
# are valid frames and the log has no errors.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
# new files made frames at their create (not written plain first, new_plain): this suite
# looks at frames as they are written
B2FS_SUITE_OPTS=new_plain=off
need_fuse

head -c 48M /dev/urandom >"$WORK/rand"
{ seq 1 10000000; } | head -c 24M >"$WORK/text"
mount_b2fs -o dirty_size=4M,chunksize=64K,codec=lz4 || { fail "mount"; finish; exit 1; }

# a writer that pauses after 12 MiB (file open, no fsync) until told to go on
mkfifo "$WORK/go" "$WORK/paused"
/usr/bin/python3 - "$WORK/text" "$MNT/text" "$WORK/go" "$WORK/paused" <<'PY' &
import os, sys
src = open(sys.argv[1], "rb").read()
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for off in range(0, 12 << 20, 1 << 20):
    os.write(fd, src[off:off + (1 << 20)])
open(sys.argv[4], "w").write("paused\n")
open(sys.argv[3]).read()
os.write(fd, src[12 << 20:])
os.close(fd)
PY
writer=$!
read -r _ <"$WORK/paused"
sleep 0.5   # the commit behind the last write has its header on disk by now
frame="$BACK/text.b2frame"
check "while the writer pauses: the backing file is a valid frame" frame_sealed "$frame"
committed=$("$B2FRAME" info "$frame" | sed -n 's/^nbytes: //p')
echo "committed while the writer is open: ${committed:-?} of $((12 << 20)) bytes written"
check "  ... holding at least 4 MiB of the 12 written (committed with the file still open)" \
    [ "${committed:-0}" -ge $((4 << 20)) ]
"$B2FRAME" cat "$frame" >"$WORK/prefix" 2>/dev/null
check "  ... whose contents are what was written there" \
    cmp -n "${committed:-1}" "$WORK/prefix" "$WORK/text"
check "  ... a reader through the mount reads the 12 MiB written so far" \
    cmp -n $((12 << 20)) "$MNT/text" "$WORK/text"
echo go >"$WORK/go"
check "the writer finishes" wait $writer
check "  ... and the file reads back identical" cmp "$WORK/text" "$MNT/text"

# b2frame verify over and over while cp writes
cp "$WORK/rand" "$MNT/rand" &
cpid=$!
nv=0 vbad=0
while kill -0 $cpid 2>/dev/null; do
    if [ -f "$BACK/rand.b2frame" ]; then
        "$B2FRAME" verify "$BACK/rand.b2frame" >/dev/null 2>&1 || vbad=$((vbad + 1))
        nv=$((nv + 1))
    fi
done
check "cp of 48 MiB" wait $cpid
check "the frame verified each time while cp wrote ($vbad of $nv bad)" [ $vbad -eq 0 ]
check "  ... and reads back identical" cmp "$WORK/rand" "$MNT/rand"
unmount_b2fs
check "backing files are valid frames" sh -c "'$B2FRAME' verify '$BACK/rand.b2frame' && '$B2FRAME' verify '$frame'"
check "no errors in the log" sh -c "! grep -i 'error\|failed' '$WORK/b2fs.log'"

# A new file stored as written (compress_idle), its commit thread late to start
# (tests/fs/slowthread.so: each b2fs-commit thread sleeps 100 ms first, as on a busy
# machine): once a second batch of 2 MiB is staged the writer waits for the first, so a
# writer that stops after 8 MiB with the file open has them all in BACKING, not the first
# batch alone.
SHIM="$top_builddir/tests/fs/slowthread.so"
if [ -f "$SHIM" ]; then
    LD_PRELOAD=$SHIM SLOWTHREAD_NAME=b2fs-commit SLOWTHREAD_MS=100 SLOWTHREAD_MARK="$WORK/slowed" \
        mount_b2fs -o compress_idle=600 || { fail "mount with late commit threads"; finish; exit 1; }
    write_held "$WORK/rand" "$MNT/late8" 8 6
    writer=$!
    check "commit threads 100 ms late: 8 MiB written and held open are in BACKING (at least 7 MiB)" \
        reached_held "$BACK/late8.b2frame" $((7 << 20)) 40 $writer
    check "  ... the preload made them late" [ -e "$WORK/slowed" ]
    check "  ... the writer finishes" wait $writer
    check "  ... and the file reads back" cmp <(head -c 8M "$WORK/rand") "$MNT/late8"
    unmount_b2fs
    check "  ... in a valid frame" "$B2FRAME" verify "$BACK/late8.b2frame"
else
    fail "tests/fs/slowthread.so is not built: a late commit thread not tested"
fi
finish
