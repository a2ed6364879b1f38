#!/bin/bash
# user.blosc2.* attributes: getfattr shows the parameters; setting codec (and others)
# on a directory changes what new files are written with; vlmeta round trips; other
# user.* attributes are kept on the backing file.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
need_fuse
command -v getfattr >/dev/null || skip_all "getfattr (package attr) is not installed"

cp "$DATA/meta-lz4-t4.b2frame" "$BACK/"
cp "$DATA/bytedelta/f32-zstd5-shuffle+bytedelta-t4.b2frame" "$BACK/bd3.b2frame"   # C-Blosc2 3.3
# (compress_idle=0: chunks compressed as written, so that their attributes show at once)
mount_b2fs -o codec=lz4,clevel=5,typesize=4,chunksize=256K,compress_idle=0 || { fail "mount"; finish; exit 1; }
get() { getfattr --only-values -n "user.blosc2.$1" "$2" 2>/dev/null; }

seq 1 100000 >"$MNT/f"
out=$(getfattr -d -m user.blosc2 "$MNT/f" 2>/dev/null)
echo "$out"
for a in nbytes cbytes cratio nchunks blocksize splitmode codec clevel filters typesize chunksize; do
    check "getfattr -d shows $a" grep -q "^user.blosc2.$a=" <<<"$out"
done
check "codec from the mount options" [ "$(get codec "$MNT/f")" = lz4 ]
check "clevel" [ "$(get clevel "$MNT/f")" = 5 ]
check "typesize" [ "$(get typesize "$MNT/f")" = 4 ]
check "chunksize in plain bytes" [ "$(get chunksize "$MNT/f")" = 262144 ]
# automatic blocksize: split (shuffled) blocks keep the unsplit size, 128K at lz4 level
# 5, where C-Blosc2 would take 64K a stream times typesize 4
check "automatic blocksize of a new file" [ "$(get blocksize "$MNT/f")" = 131072 ]
check "  ... and in its chunks" grep -q "^chunk.0: .* blocksize 131072," <("$B2FRAME" info -c "$BACK/f.b2frame")
check "nbytes = size" [ "$(get nbytes "$MNT/f")" = "$(stat -c %s "$MNT/f")" ]
check "cratio is a number > 1" /usr/bin/python3 -c "import sys; sys.exit(0 if float('$(get cratio "$MNT/f")') > 1 else 1)"
check "read-only attribute refused" not setfattr -n user.blosc2.nbytes -v 5 "$MNT/f"

mkdir "$MNT/d" "$MNT/d/sub"
check "set codec on a directory" setfattr -n user.blosc2.codec -v zstd "$MNT/d"
check "set filters on a directory" setfattr -n user.blosc2.filters -v delta,shuffle "$MNT/d"
check "a bad codec is refused" not setfattr -n user.blosc2.codec -v nosuch "$MNT/d"
check "directory shows its default" [ "$(get codec "$MNT/d")" = zstd ]
seq 1 100000 >"$MNT/d/g"
seq 1 100000 >"$MNT/d/sub/h"
check "new file in it is written with zstd" [ "$(get codec "$MNT/d/g")" = zstd ]
check "and delta,shuffle" [ "$(get filters "$MNT/d/g")" = delta,shuffle ]
check "subdirectories inherit" [ "$(get codec "$MNT/d/sub/h")" = zstd ]
# the defaults found for a directory serve its next new files, until a change (the mount's
# codec is lz4, d's zstd)
check "an ancestor's default changed right after a new file below it" \
    setfattr -n user.blosc2.codec -v zlib "$MNT/d"
seq 1 100000 >"$MNT/d/sub/h2"
check "... the next new file there has it at once" [ "$(get codec "$MNT/d/sub/h2")" = zlib ]
setfattr -x user.blosc2.codec "$MNT/d"
seq 1 100000 >"$MNT/d/sub/h3"
check "... and a removed default is gone at once" [ "$(get codec "$MNT/d/sub/h3")" = lz4 ]
setfattr -n user.blosc2.codec -v zstd "$MNT/d"
mkdir "$MNT/z"
setfattr -n user.blosc2.codec -v zlib "$MNT/z"
seq 1 100000 >"$MNT/d/sub/h4"
mv "$MNT/d/sub" "$MNT/z/sub"
seq 1 100000 >"$MNT/z/sub/h5"
check "a directory moved under another takes its defaults at once" [ "$(get codec "$MNT/z/sub/h5")" = zlib ]
mv "$MNT/z/sub" "$MNT/d/sub"
mkdir "$MNT/z/sub2"
setfattr -n user.blosc2.codec -v zstd "$MNT/z/sub2"
seq 1 100000 >"$MNT/z/sub2/h"
rm -r "$MNT/z/sub2"
mkdir "$MNT/z/sub2"
seq 1 100000 >"$MNT/z/sub2/h"
check "a directory made again at a removed one's path has no defaults of its own" \
    [ "$(get codec "$MNT/z/sub2/h")" = zlib ]
seq 1 100000 >"$MNT/d/sub/h6"
setfattr -n user.b2fs.codec -v zlib "$BACK/d"   # (changed in BACKING, not through the mount)
sleep 2.1
seq 1 100000 >"$MNT/d/sub/h7"
check "a default changed in BACKING applies within two seconds" [ "$(get codec "$MNT/d/sub/h7")" = zlib ]
setfattr -n user.b2fs.codec -v zstd "$BACK/d"
mkdir "$MNT/bd"
check "set filters shuffle,bytedelta on a directory" setfattr -n user.blosc2.filters -v shuffle,bytedelta "$MNT/bd"
/usr/bin/python3 -c "
import struct, sys
sys.stdout.buffer.write(b''.join(struct.pack('<f', (i % 977) * 0.5 + i // 977) for i in range(300001)))
" >"$WORK/series"
cp "$WORK/series" "$MNT/bd/s"
check "a file copied in is written with shuffle,bytedelta" [ "$(get filters "$MNT/bd/s")" = shuffle,bytedelta ]
check "and reads back" cmp "$WORK/series" "$MNT/bd/s"
check "an unknown filter is refused" not setfattr -n user.blosc2.filters -v shuffle,bytedelta:0 "$MNT/bd"
mkdir "$MNT/auto"
check "set filters auto on a directory" setfattr -n user.blosc2.filters -v auto "$MNT/auto"
check "... the directory shows it" [ "$(get filters "$MNT/auto")" = auto ]
cp "$WORK/series" "$MNT/auto/s"
cp /usr/include/stdlib.h "$MNT/auto/text"
head -c 300000 /dev/urandom >"$WORK/random"
cp "$WORK/random" "$MNT/auto/r"
check "... files copied in read back" sh -c 'cmp "$1" "$2/s" && cmp /usr/include/stdlib.h "$2/text" && cmp "$3" "$2/r"' \
    sh "$WORK/series" "$MNT/auto" "$WORK/random"
check "... user.blosc2.chunkfilters sums up each file's chunks" \
    [ "$(get chunkfilters "$MNT/auto/text")/$(get chunkfilters "$MNT/auto/r")" = "none=1/stored=2" ]
check "... the series' chunks are shuffled" grep -Eq "^(shuffle|bitshuffle)=[0-9]+( bitshuffle=[0-9]+)?$" \
    <(get chunkfilters "$MNT/auto/s")
"$B2FRAME" cat "$BACK/bd3.b2frame" >"$WORK/bd3"
check "a C-Blosc2 frame with bytedelta shows it" [ "$(get filters "$MNT/bd3")" = shuffle,bytedelta ]
printf 'written over' | dd of="$MNT/bd3" bs=1 seek=70000 conv=notrunc status=none
printf 'written over' | dd of="$WORK/bd3" bs=1 seek=70000 conv=notrunc status=none
check "and takes a write in place" cmp "$WORK/bd3" "$MNT/bd3"
check "file outside keeps lz4" [ "$(get codec "$MNT/f")" = lz4 ]
check "contents intact" cmp <(seq 1 100000) "$MNT/d/g"
check "the default is kept on the backing directory" \
    [ "$(getfattr --only-values -n user.b2fs.codec "$BACK/d" 2>/dev/null)" = zstd ]
check "internal attributes are hidden in the mount" not getfattr -n user.b2fs.codec "$MNT/d"

: >"$MNT/empty"
check "typesize on an empty file" setfattr -n user.blosc2.typesize -v 8 "$MNT/empty"
check "chunksize on an empty file" setfattr -n user.blosc2.chunksize -v 64K "$MNT/empty"
seq 1 50000 >>"$MNT/empty"
check "empty file took its parameters" [ "$(get chunksize "$MNT/empty")/$(get typesize "$MNT/empty")" = 65536/8 ]
check "typesize of a non-empty file is refused" not setfattr -n user.blosc2.typesize -v 2 "$MNT/f"
check "codec of a non-empty file changes for new chunks" setfattr -n user.blosc2.codec -v zlib "$MNT/f"
seq 100001 200000 >>"$MNT/f"
check "  ... and the file reads right" cmp <(seq 1 200000) "$MNT/f"
check "  ... with codec zlib" [ "$(get codec "$MNT/f")" = zlib ]

check "vlmeta set" setfattr -n user.blosc2.vlmeta.note -v "hello world" "$MNT/f"
check "vlmeta get" [ "$(get vlmeta.note "$MNT/f")" = "hello world" ]
check "fixture metalayer units" [ "$(getfattr --only-values -n user.blosc2.meta.units "$MNT/meta-lz4-t4" | od -An -tx1 | tr -d ' \n')" = a568656c6c6f ]
check "fixture vlmeta attrs" grep -q '"sensor": "t-17"' <(get vlmeta.attrs "$MNT/meta-lz4-t4")
check "other user.* kept" setfattr -n user.mine -v abc "$MNT/f"
check "  ... readable in the mount" [ "$(getfattr --only-values -n user.mine "$MNT/f")" = abc ]
check "  ... stored on the backing file" [ "$(getfattr --only-values -n user.mine "$BACK/f.b2frame")" = abc ]
setfattr -n trusted.b2test -v x "$BACK/f.b2frame"
out=$(getfattr -n trusted.b2test "$MNT/f" 2>&1)
check "other namespaces of the backing file are not shown" refused $? "$out" "Operation not supported"
out=$(getfattr -n security.selinux "$MNT/f" 2>&1)
check "  ... security labels not supported" refused $? "$out" "Operation not supported"
out=$(getfattr -n system.posix_acl_access "$MNT/f" 2>&1)
check "  ... POSIX ACLs not supported" refused $? "$out" "Operation not supported"
out=$(getfattr -n user.b2fs.filters "$MNT/f" 2>&1)
check "  ... b2fs's own user.b2fs.* attributes absent" refused $? "$out" "No such attribute"
unmount_b2fs
mount_b2fs || { fail "remount"; finish; exit 1; }
check "vlmeta survives a remount" [ "$(get vlmeta.note "$MNT/f")" = "hello world" ]
check "directory default survives a remount" [ "$(get codec "$MNT/d")" = zstd ]
unmount_b2fs
check "backing frame valid" frame_ok "$BACK/f.b2frame"
check "the bytedelta frame b2fs wrote is valid" frame_ok "$BACK/bd/s.b2frame"
check "the C-Blosc2 one after the write too" frame_ok "$BACK/bd3.b2frame"
check "and decode to what was written" cmp <("$B2FRAME" cat "$BACK/bd3.b2frame") "$WORK/bd3"
chunk_info() { "$B2FRAME" info -c "$BACK/auto/$1.b2frame" | grep "^chunk.0:"; }
check "filters=auto: text gets no filter (b2frame info -c), at the frame's typesize" grep -q "filters none, typesize 4," <(chunk_info text)
check "... a float32 series a shuffle" grep -Eq "filters (shuffle|bitshuffle), typesize 4," <(chunk_info s)
check "... random bytes are stored as they are" grep -q "filters stored," <(chunk_info r)
check "... and the frames are valid" sh -c 'for f in "$1"/*.b2frame; do "$2" verify -q "$f" || exit 1; done' sh "$BACK/auto" "$B2FRAME"

# auto is the default: it stays with a file across remounts; a fixed pipeline set on the
# file, or as a mount option, wins
mount_b2fs -o chunksize=64K,plain_small=off || fail "mount with the defaults"
# (not text: a file that starts as text gets typesize 1, and no shuffle after; kept a
# frame although it does not compress)
head -c 40000 /dev/urandom >"$MNT/dflt"
check "by default a new file's filters are auto" [ "$(get filters "$MNT/dflt")" = auto ]
check "... the backing file carries the hidden mark" \
    [ "$(getfattr --only-values -n user.b2fs.filters "$BACK/dflt.b2frame" 2>/dev/null)" = auto ]
check "... which the mount does not list" not grep -q "user.b2fs" <(getfattr -d -m - "$MNT/dflt" 2>/dev/null)
remount_b2fs -o chunksize=64K || fail "remount"
cat "$WORK/series" >>"$MNT/dflt"
check "after a remount the file is still auto" [ "$(get filters "$MNT/dflt")" = auto ]
unmount_b2fs
check "... and the float32 chunks appended got a shuffle" \
    grep -Eq "^chunk.2: .* filters (shuffle|bitshuffle)," <("$B2FRAME" info -c "$BACK/dflt.b2frame")
check "... so one frame holds chunks of different filters" \
    [ "$("$B2FRAME" info -c "$BACK/dflt.b2frame" | grep -o "filters [^ ]*," | sort -u | wc -l)" -ge 2 ]
mount_b2fs -o chunksize=64K || fail "mount"
check "a fixed pipeline set on the file wins" setfattr -n user.blosc2.filters -v shuffle "$MNT/dflt"
check "... the mark is gone" not getfattr -n user.b2fs.filters "$BACK/dflt.b2frame"
unmount_b2fs
mount_b2fs -o filters=bitshuffle || fail "mount with filters=bitshuffle"
cp /usr/include/stdio.h "$MNT/fixed"
unmount_b2fs
check "a mount option's pipeline wins too" \
    grep -q "filters bitshuffle," <("$B2FRAME" info -c "$BACK/fixed.b2frame")

# the typesize of a new file, unless given, comes from its first chunk
/usr/bin/python3 -c "
import struct, sys
sys.stdout.buffer.write(b''.join(struct.pack('<h', 2000 + (i % 1024) // 3 + (i // 1024) % 50) for i in range(400000)))
" >"$WORK/i16"
mount_b2fs || fail "mount with the defaults"
cp "$WORK/series" "$MNT/f32"
cp "$WORK/i16" "$MNT/i16"
cp /usr/include/stdlib.h "$MNT/text"
check "by default a float32 series gets typesize 4" [ "$(get typesize "$MNT/f32")" = 4 ]
check "... int16 rows typesize 2" [ "$(get typesize "$MNT/i16")" = 2 ]
check "... text typesize 1" [ "$(get typesize "$MNT/text")" = 1 ]
# (a new file's chunks are stored as written, and compressed when it goes idle or at
# unmount: tests/fs/mount_idle.sh)
remount_b2fs || fail "remount"
check "... the int16 chunks are shuffled, with bytedelta where it pays" \
    grep -Eq "^(shuffle|bitshuffle|shuffle,bytedelta)=[0-9]+$" <(get chunkfilters "$MNT/i16")
check "... they read back" sh -c 'cmp "$1" "$2/f32" && cmp "$3" "$2/i16"' sh "$WORK/series" "$MNT" "$WORK/i16"
truncate -s 0 "$MNT/f32"
cp "$WORK/i16" "$MNT/f32"
check "a file emptied and written again chooses again" [ "$(get typesize "$MNT/f32")" = 2 ]
: >"$MNT/given"
check "a typesize set on an empty file" setfattr -n user.blosc2.typesize -v 8 "$MNT/given"
cat "$WORK/i16" >"$MNT/given"
check "... is kept" [ "$(get typesize "$MNT/given")" = 8 ]
check "... and the hidden mark says only the filters are chosen" \
    [ "$(getfattr --only-values -n user.b2fs.filters "$BACK/given.b2frame" 2>/dev/null)" = auto-filters ]
unmount_b2fs
check "... which a remount keeps" [ "$(getfattr --only-values -n user.b2fs.filters "$BACK/given.b2frame" 2>/dev/null)" = auto-filters ]
check "the frames with chosen typesizes are valid" sh -c 'for f in f32 i16 text given; do "$2" verify -q "$1/$f.b2frame" || exit 1; done' sh "$BACK" "$B2FRAME"
mount_b2fs -o typesize=8 || fail "mount with typesize=8"
cp "$WORK/i16" "$MNT/i16-t8"
check "a typesize given as a mount option wins" [ "$(get typesize "$MNT/i16-t8")" = 8 ]
unmount_b2fs
finish
