#!/bin/bash
# compress_idle: a new file's chunks are stored as written and compressed once the file
# has had no write for a while, or at unmount, also one that fits in one chunk (in its own
# file, unless another program has it open: into a new one). The stored file and the
# compressed one both
# read right and are valid frames; compression leaves no dead space and keeps the file's
# time; readers during it read right; hard links, rewrites from nothing and .npy arrays
# go through it; idle_clevel sets the level then (at least clevel; clevel 0 stays stored);
# a file whose daemon was killed before it went idle is compressed after the next mount;
# a daemon killed while small files are compacted leaves whole frames that read back.
# Built with --enable-tsan the daemon logs no report.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
# new files made frames at their create (not written plain first, new_plain): this suite
# looks at frames as they are written
B2FS_SUITE_OPTS=new_plain=off
need_fuse
PY=/usr/bin/python3
command -v getfattr >/dev/null || skip_all "getfattr (package attr) is not installed"

get() { getfattr --absolute-names --only-values -n "user.blosc2.$1" "$2" 2>/dev/null; }
mtime() { stat -c %Y "$1"; }
dead() { "$B2FRAME" info "$1" | sed -n 's/^dead_bytes: //p'; }
size() { stat -c %s "$1"; }
under_1m5() { [ "$(size "$1")" -lt $((1048576 + 1048576 / 2)) ]; }
frames_ok() { for f; do frame_ok "$f" || return 1; done; }
none_stored() { not grep -q stored <(for f; do get chunkfilters "$f"; done); }
# waits up to $1 tenths of a second until no chunk of the files named after it is stored
wait_compressed() { wait_until "$1" none_stored "${@:2}"; }
# a float32 series (compressible) of $2 MiB
$PY -c "
import struct, sys
n = int(sys.argv[1]) * 262144
sys.stdout.buffer.write(b''.join(struct.pack('<f', (i % 977) * 0.5 + i // 977) for i in range(n)))
" 4 >"$WORK/s4"
$PY -c "
import struct, sys
n = int(sys.argv[1]) * 262144
sys.stdout.buffer.write(b''.join(struct.pack('<f', (i % 977) * 0.5 + i // 977) for i in range(n)))
" 48 >"$WORK/s48"

# 1. Stored while the mount is up (a long idle time), compressed at unmount
mount_b2fs -o compress_idle=600 || { fail "mount"; finish; exit 1; }
cp "$WORK/s4" "$MNT/s4"
cp /usr/include/stdlib.h "$MNT/text"
check "a new file's chunks are stored as written" [ "$(get chunkfilters "$MNT/s4")" = stored=4 ]
check "... and take the room of the data" [ "$(size "$BACK/s4.b2frame")" -gt "$(size "$WORK/s4")" ]
check "... and read back" cmp "$WORK/s4" "$MNT/s4"
check "... in a valid frame" frame_ok "$BACK/s4.b2frame"
# a writer that keeps its new file open: the stored chunks reach BACKING behind it once
# 2 MiB and a quarter of the file wait (not at half of dirty_size, 32 MiB)
write_held "$WORK/s48" "$MNT/open8" 8 10
writer=$!
# (up to 8 s: make check runs two tests at once on 2 processors)
check "8 MiB written, the file still open: most of it is in BACKING already" \
    reached_held "$BACK/open8.b2frame" $((4 << 20)) 80 $writer
wait $writer
check "... and it reads back" cmp <(head -c $((8 << 20)) "$WORK/s48") "$MNT/open8"
check "a new file of one chunk that compresses is stored when closed, for the idle thread" \
    [ "$(get chunkfilters "$MNT/text")" = stored=1 ]
check "... and reads back" cmp /usr/include/stdlib.h "$MNT/text"
# one of several blocks (600 KB) too
cat "$top_srcdir"/docs/*.md "$top_srcdir"/fs/*.c | head -c 600000 >"$WORK/mid"
cp "$WORK/mid" "$MNT/mid"
check "so is one of several blocks" [ "$(get chunkfilters "$MNT/mid")" = stored=1 ]
check "... and reads back" cmp "$WORK/mid" "$MNT/mid"
check "... in a valid frame" frame_ok "$BACK/mid.b2frame"
ino_text=$(stat -c %i "$BACK/text.b2frame")
ino_mid=$(stat -c %i "$BACK/mid.b2frame")
touch -d "2020-01-02 03:04:05" "$MNT/s4"
t_s4=$(mtime "$MNT/s4")
unmount_b2fs
check "at unmount it is compressed" [ "$(size "$BACK/s4.b2frame")" -lt $(($(size "$WORK/s4") / 2)) ]
check "... with no dead space left" [ "$(dead "$BACK/s4.b2frame")" = 0 ]
check "... in a valid frame" frame_ok "$BACK/s4.b2frame"
check "... the text too" [ "$(size "$BACK/text.b2frame")" -lt $(($(size /usr/include/stdlib.h) / 2)) ]
check "... and the file of several blocks" [ "$(size "$BACK/mid.b2frame")" -lt 300000 ]
check "... both compacted where they were: the same files" \
    [ "$(stat -c %i "$BACK/text.b2frame") $(stat -c %i "$BACK/mid.b2frame")" = "$ino_text $ino_mid" ]
check "... with no dead space left" [ "$(dead "$BACK/text.b2frame") $(dead "$BACK/mid.b2frame")" = "0 0" ]
check "... in valid frames" frames_ok "$BACK/text.b2frame" "$BACK/mid.b2frame"
check "... no temporary file is left" not sh -c 'ls -A "$1" | grep -q "^\.b2fs-tmp"' sh "$BACK"
mount_b2fs -o compress_idle=600 || { fail "remount"; finish; exit 1; }
check "... its time is the one it had" [ "$(mtime "$MNT/s4")" = "$t_s4" ]
check "... its chunks shuffled now" grep -Eq "^(shuffle|bitshuffle|shuffle,bytedelta)=4$" <(get chunkfilters "$MNT/s4")
check "... and it reads back" cmp "$WORK/s4" "$MNT/s4"
check "... the small files too, their chunks compressed" \
    sh -c 'cmp /usr/include/stdlib.h "$1/text" && cmp "$2" "$1/mid"' sh "$MNT" "$WORK/mid"
check "... with no chunk stored" not grep -q stored <(get chunkfilters "$MNT/text"; get chunkfilters "$MNT/mid")

# 2. Written anew (truncated to nothing): stored again, compressed again
cp "$WORK/s4" "$MNT/s4"
check "a file truncated and written anew is stored as written again" [ "$(get chunkfilters "$MNT/s4")" = stored=4 ]
# appending to a file that is compressed already compresses as written
cat /usr/include/stdio.h >>"$MNT/text"
check "an append to a compressed file is compressed as written" not grep -q stored <(get chunkfilters "$MNT/text")
check "... and reads back" cmp <(cat /usr/include/stdlib.h /usr/include/stdio.h) "$MNT/text"

# 3. Hard links: no new file may replace a linked file (that would split its names). It is
# compacted in its own file once compressed (durably when it was fsynced), all its chunks
# moved past the old frame first, when together they save enough for the compacted frame
# to fit where the old one was, and nothing else has it open; otherwise it stays as
# written (compressed after its stored chunks, it would keep them as dead space and grow)
cp "$WORK/s4" "$MNT/linked"
ln "$MNT/linked" "$MNT/link2"
touch -d "2021-05-06 07:08:09" "$MNT/linked"
t_linked=$(mtime "$MNT/linked")
ino_linked=$(stat -c %i "$BACK/linked.b2frame")
# a chunk of random bytes, which moves as it is, then one of the series
{ head -c 1048576 /dev/urandom; head -c 1048576 "$WORK/s4"; } >"$WORK/mixed"
cp "$WORK/mixed" "$MNT/mixed"
ln "$MNT/mixed" "$MNT/mixed2"
ino_mixed=$(stat -c %i "$BACK/mixed.b2frame")
# random bytes alone: nothing saved
head -c 2097152 /dev/urandom >"$WORK/noise"
cp "$WORK/noise" "$MNT/noise"
ln "$MNT/noise" "$MNT/noise2"
size_noise=$(size "$BACK/noise.b2frame")
# fsynced: its stored chunks may be on the disk, so its compaction syncs too
dd if="$WORK/s4" of="$MNT/synced" bs=1M conv=fsync status=none
ln "$MNT/synced" "$MNT/synced2"
ino_synced=$(stat -c %i "$BACK/synced.b2frame")
# open in BACKING too (no lease): a reader there would see its bytes overwritten
cp "$WORK/s4" "$MNT/opened"
ln "$MNT/opened" "$MNT/opened2"
size_opened=$(size "$BACK/opened.b2frame")
exec 8<"$BACK/opened.b2frame"
unmount_b2fs
exec 8<&-
check "a hard-linked file written lately is compressed" \
    [ "$(size "$BACK/linked.b2frame")" -lt $(($(size "$WORK/s4") / 2)) ]
check "... in its own file, one file under both names" \
    [ "$(stat -c %i "$BACK/linked.b2frame") $(stat -c %i "$BACK/link2.b2frame")" = "$ino_linked $ino_linked" ]
check "... with no dead space left" [ "$(dead "$BACK/linked.b2frame")" = 0 ]
check "one with a chunk that does not compress too, that chunk as it was" \
    under_1m5 "$BACK/mixed.b2frame"
check "... in its own file, with no dead space left" \
    [ "$(stat -c %i "$BACK/mixed2.b2frame") $(dead "$BACK/mixed.b2frame")" = "$ino_mixed 0" ]
check "one fsynced too" [ "$(size "$BACK/synced.b2frame")" -lt $(($(size "$WORK/s4") / 2)) ]
check "... in its own file, with no dead space left" \
    [ "$(stat -c %i "$BACK/synced2.b2frame") $(dead "$BACK/synced.b2frame")" = "$ino_synced 0" ]
check "one of random bytes stays as written" [ "$(size "$BACK/noise.b2frame")" = "$size_noise" ]
check "so does one open in BACKING too" [ "$(size "$BACK/opened.b2frame")" = "$size_opened" ]
check "... all in valid frames" frames_ok "$BACK/linked.b2frame" "$BACK/mixed.b2frame" \
    "$BACK/synced.b2frame" "$BACK/noise.b2frame" "$BACK/opened.b2frame"
mount_b2fs -o compress_idle=1 || { fail "remount"; finish; exit 1; }
check "... the time kept" [ "$(mtime "$MNT/link2")" = "$t_linked" ]
check "... and every name reads back" sh -c 'for f in linked link2 synced synced2 opened opened2; do
    cmp "$1" "$2/$f" || exit 1; done; cmp "$3" "$2/mixed" && cmp "$3" "$2/mixed2" &&
    cmp "$4" "$2/noise" && cmp "$4" "$2/noise2"' sh "$WORK/s4" "$MNT" "$WORK/mixed" "$WORK/noise"
# the same while mounted, where the idle thread looks at one chunk after another
cp "$WORK/mixed" "$MNT/mixed3"
ln "$MNT/mixed3" "$MNT/mixed4"
cp "$WORK/s4" "$MNT/linked3"
ln "$MNT/linked3" "$MNT/link4"
wait_compressed 100 "$MNT/linked3"
# (the random chunk stays stored: its file is done once it is small)
wait_until 100 under_1m5 "$BACK/mixed3.b2frame"
check "a hard-linked file idle while mounted is compressed" \
    [ "$(size "$BACK/linked3.b2frame")" -lt $(($(size "$WORK/s4") / 2)) ]
check "... and one with a chunk that does not compress, idle before it" \
    under_1m5 "$BACK/mixed3.b2frame"
check "... with no dead space left" [ "$(dead "$BACK/mixed3.b2frame")" = 0 ]
check "... both read back" sh -c 'cmp "$1" "$2/link4" && cmp "$3" "$2/mixed4"' sh "$WORK/s4" "$MNT" "$WORK/mixed"
# open in BACKING while the idle thread looks at it: looked at again later
cp "$WORK/s4" "$MNT/held3"
ln "$MNT/held3" "$MNT/held4"
exec 7<"$BACK/held3.b2frame"
sleep 2.5
check "a hard-linked file open in BACKING too is left stored meanwhile" \
    grep -q stored <(get chunkfilters "$MNT/held3")
exec 7<&-
wait_compressed 100 "$MNT/held3"
check "... and compressed once closed there" [ "$(size "$BACK/held3.b2frame")" -lt $(($(size "$WORK/s4") / 2)) ]
check "... and reads back" cmp "$WORK/s4" "$MNT/held4"

# 4. Compressed while mounted once idle (1 s here), with a reader going all along
cp "$WORK/s48" "$MNT/s48"
rounds=0 bad=0
for i in $(seq 1 150); do
    cmp -s "$WORK/s48" "$MNT/s48" || bad=$((bad + 1))
    rounds=$((rounds + 1))
    grep -q stored <(get chunkfilters "$MNT/s48") || break
done
echo "readers while it was compressed: $rounds, $bad differed"
check "a file idle for compress_idle seconds is compressed while mounted" not grep -q stored <(get chunkfilters "$MNT/s48")
check "... every read meanwhile was right" [ "$bad" = 0 ]
check "... and it reads back" cmp "$WORK/s48" "$MNT/s48"
check "... in a valid frame" frame_ok "$BACK/s48.b2frame"
check "... of less than half the room" [ "$(size "$BACK/s48.b2frame")" -lt $(($(size "$WORK/s48") / 2)) ]

# A small file compressed while mounted: in its own file; when another program has the
# backing file open (whose reads the bytes overwritten would break), into a new file
cp /usr/include/stdlib.h "$MNT/small"
cp /usr/include/stdlib.h "$MNT/held"
ino_small=$(stat -c %i "$BACK/small.b2frame")
ino_held=$(stat -c %i "$BACK/held.b2frame")
size_held=$(size "$BACK/held.b2frame")
exec 9<"$BACK/held.b2frame"
wait_compressed 50 "$MNT/small" "$MNT/held"
check "a small file idle for compress_idle seconds is compressed while mounted" \
    [ "$(size "$BACK/small.b2frame")" -lt $(($(size /usr/include/stdlib.h) / 2)) ]
check "... in its own file" [ "$(stat -c %i "$BACK/small.b2frame")" = "$ino_small" ]
check "... which reads back" cmp /usr/include/stdlib.h "$MNT/small"
check "one whose backing file is open elsewhere too" \
    [ "$(size "$BACK/held.b2frame")" -lt $(($(size /usr/include/stdlib.h) / 2)) ]
check "... into a new file" [ "$(stat -c %i "$BACK/held.b2frame")" != "$ino_held" ]
check "... while the one open is left as it was" [ "$(stat -L -c %s /dev/fd/9)" = "$size_held" ]
exec 9<&-
check "... which reads back" cmp /usr/include/stdlib.h "$MNT/held"
check "... in valid frames" frames_ok "$BACK/small.b2frame" "$BACK/held.b2frame"

# A file of one whole chunk (1 MiB of text): once its compressed chunk is committed more
# than half of it is dead, and that commit compacts it into a new file; nothing after
# that may keep the new file's commit lock, or a second mount's commit to it waits forever
$PY -c "
import sys
d = b''.join(open(f, 'rb').read() for f in sys.argv[1:])
sys.stdout.buffer.write((d * (2 + (1 << 20) // len(d)))[:1 << 20])
" "$top_srcdir"/fs/*.c >"$WORK/whole"
cp "$WORK/whole" "$MNT/whole"
wait_compressed 50 "$MNT/whole"
check "a file of one whole chunk is compressed while mounted" \
    [ "$(size "$BACK/whole.b2frame")" -lt $((1 << 19)) ]
check "... with no dead space" [ "$(dead "$BACK/whole.b2frame")" = 0 ]
mkdir -p "$WORK/mnt2"
"$B2FS" -f "$BACK" "$WORK/mnt2" 2>>"$WORK/b2fs.log" &
pid2=$!
for i in $(seq 1 100); do grep -q " $WORK/mnt2 fuse.b2fs " /proc/mounts && break; sleep 0.05; done
# (a writer stuck in the second mount's commit cannot be killed: its daemon is, after 10 s)
printf tail >>"$WORK/mnt2/whole" &
appender=$!
for i in $(seq 1 100); do kill -0 "$appender" 2>/dev/null || break; sleep 0.1; done
check "... and a second mount writes to it at once (no commit lock left held)" \
    not kill -0 "$appender" 2>/dev/null
kill -0 "$appender" 2>/dev/null && kill -KILL "$pid2"
wait "$appender" 2>/dev/null
fusermount3 -u "$WORK/mnt2" 2>/dev/null || fusermount3 -uz "$WORK/mnt2"
wait "$pid2" 2>/dev/null
# (this mount looks for other mounts' commits at most once a second)
for i in $(seq 1 50); do
    cmp -s <(cat "$WORK/whole"; printf tail) "$MNT/whole" && break
    sleep 0.1
done
check "... which the first mount reads" cmp <(cat "$WORK/whole"; printf tail) "$MNT/whole"

# 5. Written in bursts with pauses longer than compress_idle: whatever came in each burst
# reads back, and the file ends compressed
: >"$WORK/bursts"
for b in 1 2 3; do
    head -c $((b * 700000)) "$WORK/s48" >>"$WORK/bursts"
    head -c $((b * 700000)) "$WORK/s48" >>"$MNT/bursts"
    sleep 1.5
done
check "a file written in bursts reads back" cmp "$WORK/bursts" "$MNT/bursts"

# 6. A .npy file written through the mount becomes an array, compressed as it does
if $PY -c 'import numpy' 2>/dev/null; then
    $PY -c "
import numpy as np, sys
np.save(sys.argv[1], (np.arange(300000, dtype=np.float32) * 0.25).reshape(600, 500))
" "$MNT/a.npy"
    check "a .npy file written is stored as an array" [ -f "$BACK/a.b2nd" ]
    check "... and loads back" $PY -c "
import numpy as np, sys
a = np.load(sys.argv[1])
sys.exit(0 if a.shape == (600, 500) and (a.ravel() == np.arange(300000, dtype=np.float32) * 0.25).all() else 1)
" "$MNT/a.npy"
else
    echo "python3-numpy is not installed: the .npy part is not run"
fi

unmount_b2fs
check "after unmount the burst file is compressed" [ "$(size "$BACK/bursts.b2frame")" -lt $(($(size "$WORK/bursts") / 2)) ]
for f in "$BACK"/*.b2frame "$BACK"/*.b2nd; do
    [ -e "$f" ] || continue
    check "$(basename "$f") is a valid frame" frame_ok "$f"
done
if [ -n "${CB2CHECK:-}" ] && [ -x "$CB2CHECK" ]; then
    check "C-Blosc2 reads the compressed series to its bytes" \
        [ "$("$CB2CHECK" "$BACK/s48.b2frame" | cut -f5)" = "$(sha256sum <"$WORK/s48" | cut -c1-64)" ]
fi

# 7. idle_clevel: the level of compression when idle, at least the file's clevel; clevel 0
# stays stored
cat "$top_srcdir"/docs/*.md | head -c 400000 >"$WORK/text"
for opt in idle_clevel=1 idle_clevel=4 idle_clevel=5 clevel=0; do
    mount_b2fs -o $opt || { fail "mount with $opt"; finish; exit 1; }
    cp "$WORK/text" "$MNT/text-${opt#*=}-${opt%%=*}"
    unmount_b2fs
done
mount_b2fs || { fail "mount"; finish; exit 1; }
cp "$WORK/text" "$MNT/text-default"
unmount_b2fs
check "the default stores text as idle_clevel=4 does" \
    cmp "$BACK/text-default.b2frame" "$BACK/text-4-idle_clevel.b2frame"
check "... in less than idle_clevel=1" \
    [ "$(size "$BACK/text-4-idle_clevel.b2frame")" -lt "$(size "$BACK/text-1-idle_clevel.b2frame")" ]
check "... and idle_clevel=5 in less again" \
    [ "$(size "$BACK/text-5-idle_clevel.b2frame")" -lt "$(size "$BACK/text-4-idle_clevel.b2frame")" ]
mount_b2fs || { fail "remount"; finish; exit 1; }
for f in text-1-idle_clevel text-4-idle_clevel text-5-idle_clevel text-0-clevel text-default; do
    check "$f reads back" cmp "$MNT/$f" "$WORK/text"
done
check "a file of clevel 0 stays uncompressed when idle" \
    [ "$(get cbytes "$MNT/text-0-clevel")" -ge "$(size "$WORK/text")" ]
unmount_b2fs
# 8. A daemon killed before a file went idle: the file stays stored, marked so in BACKING,
# and the next mount compresses it once it is opened and idle
mount_b2fs -o compress_idle=600 || { fail "mount"; finish; exit 1; }
cp "$WORK/s4" "$MNT/killed"
head -c $((3 << 20)) /dev/urandom >"$WORK/random"
cp "$WORK/random" "$MNT/random"
stored_mark() { getfattr --absolute-names -n user.b2fs.stored "$1" >/dev/null 2>&1; }
check "a file stored as written is marked so in BACKING" stored_mark "$BACK/killed.b2frame"
check "... a mark that does not show through the mount" sh -c \
    'l=$(getfattr --absolute-names -d -m - "$1" 2>/dev/null); echo "$l" | grep -q blosc2.nbytes && ! echo "$l" | grep -q b2fs.stored' \
    sh "$MNT/killed"
kill -KILL "$B2FS_PID"
wait "$B2FS_PID" 2>/dev/null
B2FS_PID=
fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" 2>/dev/null
check "the daemon killed before it went idle, it is still stored" \
    [ "$(size "$BACK/killed.b2frame")" -gt "$(size "$WORK/s4")" ]
mount_b2fs -o compress_idle=1 || { fail "remount"; finish; exit 1; }
check "... and reads back after the next mount" cmp "$WORK/s4" "$MNT/killed"
cat "$MNT/random" >/dev/null
for i in $(seq 1 60); do
    [ "$(size "$BACK/killed.b2frame")" -lt $(($(size "$WORK/s4") / 2)) ] &&
        ! stored_mark "$BACK/random.b2frame" && break
    sleep 0.1
done
check "opened, it is compressed once idle" [ "$(size "$BACK/killed.b2frame")" -lt $(($(size "$WORK/s4") / 2)) ]
check "... and marked no more" not stored_mark "$BACK/killed.b2frame"
check "... and it reads back" cmp "$WORK/s4" "$MNT/killed"
check "a file that does not compress loses the mark too (it stays stored)" \
    sh -c '! getfattr -n user.b2fs.stored "$1" >/dev/null 2>&1 && cmp -s "$2" "$3"' sh \
    "$BACK/random.b2frame" "$WORK/random" "$MNT/random"
unmount_b2fs
check "killed.b2frame is a valid frame" frame_ok "$BACK/killed.b2frame"
# 9. The daemon killed while small files are compressed and compacted in their own files
# (at random moments, five times): every frame is whole and reads back, compressed or not
mkdir -p "$WORK/hdr"
ls /usr/include/*.h | head -300 | xargs -I{} cp {} "$WORK/hdr/"
torn=0 unread=0 compressed=0
for round in 1 2 3 4 5; do
    mount_b2fs -o compress_idle=1 || { fail "mount, round $round"; break; }
    cp -r "$WORK/hdr" "$MNT/k$round"
    sleep "$((RANDOM % 2)).$((RANDOM % 10))"
    kill -KILL "$B2FS_PID"
    wait "$B2FS_PID" 2>/dev/null
    B2FS_PID=
    fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" 2>/dev/null
    for f in "$BACK/k$round"/*.b2frame; do
        frame_ok "$f" || torn=$((torn + 1))
        [ "$(dead "$f")" = 0 ] && compressed=$((compressed + 1))
    done
    mount_b2fs -o compress_idle=600 || { fail "remount, round $round"; break; }
    for f in "$WORK/hdr"/*; do
        cmp -s "$f" "$MNT/k$round/${f##*/}" || unread=$((unread + 1))
    done
    unmount_b2fs
done
echo "killed while compacting: $compressed frames compacted by then, $torn not whole, $unread read back different"
check "killed while compacting small files: every frame is whole" [ "$torn" = 0 ]
check "... and every file reads back" [ "$unread" = 0 ]
check "... some of them compacted by then" [ "$compressed" -gt 0 ]
# 10. compress_idle=0 (the default over a cluster file system): each new file is compressed
# as written, and filters=auto picks its typesize from its first chunk at its close (a
# header: 1). The node's compression context changes then, and the close compresses with
# the new one: the daemon stays up and every file reads back.
mount_b2fs -o compress_idle=0 || { fail "mount with compress_idle=0"; finish; exit 1; }
cp -r "$WORK/hdr" "$MNT/eager"
head -c 300000 "$WORK/s4" >"$WORK/s4small"
cp "$WORK/s4small" "$WORK/s4" "$MNT/eager/"
differ=0
for f in "$WORK/hdr"/* "$WORK/s4small" "$WORK/s4"; do
    cmp -s "$f" "$MNT/eager/${f##*/}" || differ=$((differ + 1))
done
check "compress_idle=0: the daemon is up after new files of one chunk were closed" kill -0 "$B2FS_PID"
check "... and all $(ls "$WORK/hdr" | wc -l) headers and both series read back" [ "$differ" = 0 ]
hdr1=$(ls "$WORK/hdr" | head -1)
check "... a header was given typesize 1 at its close" [ "$(get typesize "$MNT/eager/$hdr1")" = 1 ]
filters1=$(get chunkfilters "$MNT/eager/$hdr1")
check "... and compressed as written, not stored ($filters1)" \
    eval '[ -n "$filters1" ] && ! grep -q stored <<<"$filters1"'
unmount_b2fs
check "... and its frames are whole" frames_ok "$BACK/eager/$hdr1.b2frame" "$BACK/eager/s4small.b2frame"
check "b2fs --help tells of idle_clevel" grep -q "idle_clevel=N" <("$B2FS" --help)
check "the daemon logged no error" not grep -Eq "error|failed|ThreadSanitizer" "$WORK/b2fs.log"
finish
