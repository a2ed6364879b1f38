#!/bin/sh
# b2frame pack/unpack round trips for every codec and filter pipeline and odd sizes;
# meta set/get/delete; compact keeps contents and shrinks an edited frame; verify
# rejects damaged copies with a message naming the file.
. "$top_srcdir/tests/lib/lib.sh"
B2FRAME="$top_builddir/contrib/b2frame"
[ -x "$B2FRAME" ] || skip_all "contrib/b2frame is not built"
command -v python3 >/dev/null || skip_all "python3 is missing (makes the test data)"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

# Inputs: integer-valued float64 (exact under trunc:20), zeros, random bytes.
python3 - "$T" <<'EOF'
import random, struct, sys
d = sys.argv[1]
vals = [float((i * 37) % 5000 - 2500) for i in range(37500)]
open(d + "/series", "wb").write(struct.pack("<%dd" % len(vals), *vals))
open(d + "/zeros", "wb").write(bytes(200000))
r = random.Random(7)
open(d + "/random", "wb").write(bytes(r.getrandbits(8) for _ in range(100000)))
EOF

field() { sed -n "s/^$1: //p" "$2"; }

# roundtrip NAME IN PACK-OPTIONS...: pack, then cat and unpack give IN back.
roundtrip() {
    name=$1 in=$2
    shift 2
    out="$T/rt.b2frame"
    rm -f "$out" "$T/back"
    if ! "$B2FRAME" pack "$@" "$in" "$out" 2>"$T/err"; then
        fail "$name: pack $*: $(cat "$T/err")"
        return
    fi
    if ! "$B2FRAME" cat "$out" >"$T/catout" 2>"$T/err" || ! cmp -s "$T/catout" "$in"; then
        fail "$name: cat differs from the input $(cat "$T/err")"
    elif ! "$B2FRAME" unpack "$out" "$T/back" 2>"$T/err" || ! cmp -s "$T/back" "$in"; then
        fail "$name: unpack differs from the input $(cat "$T/err")"
    elif ! "$B2FRAME" verify -q "$out" 2>"$T/err"; then
        fail "$name: verify: $(cat "$T/err")"
    else
        ok "$name"
    fi
}

# Every codec x filter pipeline x size (0, 1, 7, 12345, several chunks + a partial one).
for size in 0 1 7 12345 300000; do
    head -c "$size" "$T/series" >"$T/in-$size"
done
for codec in blosclz lz4 lz4hc zlib zstd; do
    for filters in none shuffle bitshuffle delta delta,shuffle trunc:20,shuffle; do
        for size in 0 1 7 12345 300000; do
            roundtrip "$codec $filters $size bytes" "$T/in-$size" \
                -c "$codec" -l 5 -f "$filters" -t 8 -s 64K
        done
    done
done

# Other parameters: typesizes, blocksize, clevel 0, suffixes, random and zero data.
roundtrip "typesize 4, blocksize 16K" "$T/in-300000" -c zstd -t 4 -b 16K -s 128K
roundtrip "typesize 3, odd size" "$T/in-12345" -c lz4 -t 3 -s 4K -f shuffle
roundtrip "typesize 1, bitshuffle" "$T/in-300000" -c zlib -l 9 -t 1 -f bitshuffle -s 100000
roundtrip "clevel 0 (stored)" "$T/in-300000" -c zstd -l 0 -s 64K
roundtrip "random bytes" "$T/random" -c lz4 -t 8 -s 32K
roundtrip "chunksize 1M (suffix), defaults" "$T/in-300000" -s 1M
roundtrip "chunksize 1 byte" "$T/in-7" -s 1 -t 1
roundtrip "zero chunks" "$T/zeros" -c zstd -t 8 -s 64K
"$B2FRAME" info "$T/rt.b2frame" >"$T/info"
check "zero chunks are stored as special chunks" test "$(field special_chunks "$T/info")" -ge 3
check "zero frame is small" test "$(field file_len "$T/info")" -lt 2000

# pack from stdin; info reports what was asked.
if "$B2FRAME" pack -c zlib -l 3 -f delta,shuffle -t 4 -s 32K - "$T/stdin.b2frame" <"$T/in-300000" \
        2>"$T/err"; then
    "$B2FRAME" info "$T/stdin.b2frame" >"$T/info"
    check "info after pack from stdin" test \
        "$(field codec "$T/info") $(field clevel "$T/info") $(field filters "$T/info") $(field typesize "$T/info") $(field chunksize "$T/info") $(field nchunks "$T/info") $(field nbytes "$T/info")" \
        = "zlib 3 delta,shuffle 4 32768 10 300000"
    "$B2FRAME" cat "$T/stdin.b2frame" | cmp -s - "$T/in-300000"
    check "cat after pack from stdin" test $? -eq 0
else
    fail "pack from stdin: $(cat "$T/err")"
fi

# Bad parameters are refused with exit status 2 and a message naming the value.
for bad in "-c snappy" "-l 10" "-f bogus" "-t 0" "-t 256" "-s 0" "-s 3X" "-b -1"; do
    # shellcheck disable=SC2086
    "$B2FRAME" pack $bad "$T/in-7" "$T/bad.b2frame" 2>"$T/err"
    rc=$?
    value=${bad#* }
    if [ $rc -eq 2 ] && grep -q -- "'$value'" "$T/err" && [ ! -e "$T/bad.b2frame" ]; then
        ok "pack $bad refused"
    else
        fail "pack $bad: exit $rc, $(cat "$T/err")"
    fi
done
"$B2FRAME" pack "$T/in-7" 2>/dev/null
check "pack without OUT: exit 2" test $? -eq 2
"$B2FRAME" pack "$T/nosuch" "$T/bad.b2frame" 2>"$T/err"
check "pack of a missing input names it" grep -q "$T/nosuch: No such file" "$T/err"
check "no temporary files left behind" test -z "$(ls -A "$T" | grep '^\.')"

# Metalayers: set, get, replace, binary from stdin, delete.
F="$T/meta.b2frame"
"$B2FRAME" pack -c zstd -t 8 -s 64K "$T/in-300000" "$F"
check "meta set" "$B2FRAME" meta "$F" attrs '{"units": "K"}'
check "meta get" test "$("$B2FRAME" meta "$F" attrs)" = '{"units": "K"}'
check "meta replace" "$B2FRAME" meta "$F" attrs 'a longer value than before'
check "meta get after replace" test "$("$B2FRAME" meta "$F" attrs)" = 'a longer value than before'
printf 'bin\000ary\377' >"$T/binval"
"$B2FRAME" meta "$F" blob - <"$T/binval"
"$B2FRAME" meta "$F" blob >"$T/got"
check "meta binary value from stdin" cmp -s "$T/got" "$T/binval"
"$B2FRAME" meta "$F" >"$T/list"
check "meta lists both" test "$(cut -d: -f1 "$T/list" | tr '\n' ' ')" = "vlmeta.attrs vlmeta.blob "
check "meta delete" "$B2FRAME" meta -d "$F" blob
"$B2FRAME" meta "$F" blob >/dev/null 2>"$T/err"
check "deleted vlmetalayer is gone" grep -q "no metalayer or vlmetalayer named 'blob'" "$T/err"
"$B2FRAME" cat "$F" | cmp -s - "$T/in-300000"
check "contents unchanged by meta edits" test $? -eq 0
check "verify after meta edits" "$B2FRAME" verify -q "$F"

# Metalayers: same-size updates only.
cp "$DATA/meta-lz4-t4.b2frame" "$T/mlayer.b2frame"
printf '\245HELLO' >"$T/units"
check "meta -m updates a metalayer" "$B2FRAME" meta -m "$T/mlayer.b2frame" units "$(cat "$T/units")"
"$B2FRAME" meta "$T/mlayer.b2frame" units | cmp -s - "$T/units"
check "updated metalayer reads back" test $? -eq 0
"$B2FRAME" meta -m "$T/mlayer.b2frame" units toolong 2>"$T/err"
check "meta -m of another size is refused" grep -q "units holds 6 bytes" "$T/err"
check "contents unchanged by a metalayer update" sh -c \
    "'$B2FRAME' cat '$T/mlayer.b2frame' | sha256sum | grep -q ^2cac6e89f29bd0ed"

# Compact: an edited frame (dead space from replaced vlmetalayers) shrinks, keeps everything.
for i in 1 2 3 4 5 6; do
    head -c $((i * 3000)) "$T/random" | "$B2FRAME" meta "$F" big - || fail "meta set big $i"
done
head -c 18000 "$T/random" >"$T/bigval"
"$B2FRAME" info "$F" >"$T/info"
before=$(wc -c <"$F")
check "edited frame has dead space" test "$(field dead_bytes "$T/info")" -gt 0
if "$B2FRAME" compact "$F" >"$T/out" 2>"$T/err"; then
    after=$(wc -c <"$F")
    check "compact shrinks ($before -> $after)" test "$after" -lt "$before"
    "$B2FRAME" info "$F" >"$T/info"
    check "no dead space after compact" test "$(field dead_bytes "$T/info")" -eq 0
    "$B2FRAME" cat "$F" | cmp -s - "$T/in-300000"
    check "compact keeps the contents" test $? -eq 0
    "$B2FRAME" meta "$F" big | cmp -s - "$T/bigval"
    check "compact keeps vlmetalayers" test $? -eq 0 -a "$("$B2FRAME" meta "$F" attrs)" = 'a longer value than before'
    check "verify after compact" "$B2FRAME" verify -q "$F"
else
    fail "compact: $(cat "$T/err")"
fi
cp "$DATA/bloscpack/f64-lz4-c262144-off-adler32.blp" "$T/pack.blp"
"$B2FRAME" compact "$T/pack.blp" >/dev/null 2>"$T/err"
check "compact refuses a Bloscpack file, naming it" test $? -ne 0 -a -n "$(grep "$T/pack.blp" "$T/err")"

# Verify: sound files pass; damaged copies fail with a message naming the copy.
G="$T/good.b2frame"
"$B2FRAME" pack -c zstd -t 8 -s 64K "$T/in-300000" "$G"
check "verify: a sound frame" sh -c "'$B2FRAME' verify '$G' | grep -q ': ok'"
check "verify: reference frames" "$B2FRAME" verify -q "$DATA/meta-lz4-t4.b2frame" \
    "$DATA/special-zstd-t8-c262144.b2frame" "$DATA/edited-zstd-t8.b2frame"
check "verify: Bloscpack files" "$B2FRAME" verify -q "$DATA"/bloscpack/*.blp
check "verify: a Blosc1 chunk" "$B2FRAME" verify -q "$DATA/blosc1/f64-lz45-shuffle-t8-n200008.blosc"

expect_damaged() {  # description, file
    "$B2FRAME" verify "$2" >"$T/vout" 2>"$T/verr"
    rc=$?
    if [ $rc -ne 0 ] && grep -q "$2: " "$T/verr"; then
        ok "verify rejects $1: $(head -n 1 "$T/verr")"
    else
        fail "verify $1: exit $rc, $(cat "$T/verr")"
    fi
}
size=$(wc -c <"$G")
head -c $((size - 10)) "$G" >"$T/trunc-end.b2frame"
expect_damaged "a frame missing its last 10 bytes" "$T/trunc-end.b2frame"
head -c $((size / 2)) "$G" >"$T/trunc-half.b2frame"
expect_damaged "a frame cut in half" "$T/trunc-half.b2frame"

flip() {  # file, offset, count: invert count bytes
    python3 - "$@" <<'EOF'
import sys
path, off, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
b = bytearray(open(path, "rb").read())
for i in range(off, off + n):
    b[i] ^= 0xff
open(path, "wb").write(b)
EOF
}
# chunk_at FILE NBYTES first|last: file offset of the first or last Blosc2 chunk header
# (format 5, typesize 8) of NBYTES decompressed bytes. The index chunk of a frame of
# N chunks is the last one of 8*N bytes.
chunk_at() {
    python3 - "$@" <<'EOF'
import sys
b = open(sys.argv[1], "rb").read()
want, which = int(sys.argv[2]), sys.argv[3]
hits = [i for i in range(len(b) - 16)
        if b[i] == 5 and b[i + 1] == 1 and b[i + 3] == 8
        and int.from_bytes(b[i + 4:i + 8], "little") == want]
print(hits[0] if which == "first" else hits[-1])
EOF
}
index=$(chunk_at "$G" 40 last)
cp "$G" "$T/index-head.b2frame"
flip "$T/index-head.b2frame" $((index + 4)) 8
expect_damaged "flipped bytes in the index chunk header" "$T/index-head.b2frame"
cp "$G" "$T/index-data.b2frame"
flip "$T/index-data.b2frame" $((index + 32)) 16
expect_damaged "flipped bytes in the index entries" "$T/index-data.b2frame"
# (Flipped bytes inside a compressed stream need not be detectable: frames carry no
# checksums. A chunk header that lies is.)
chunk0=$(chunk_at "$G" 65536 first)
cp "$G" "$T/chunk-head.b2frame"
flip "$T/chunk-head.b2frame" $((chunk0 + 8)) 8
expect_damaged "flipped bytes in chunk 0's header" "$T/chunk-head.b2frame"
cp "$DATA/bloscpack/i32-blosclz-c100000-off-crc32.blp" "$T/bad-checksum.blp"
flip "$T/bad-checksum.blp" 20000 1
expect_damaged "a Bloscpack chunk that fails its checksum" "$T/bad-checksum.blp"
grep -q "chunk 0: .*checksum" "$T/verr" || fail "checksum message does not name chunk 0: $(cat "$T/verr")"
"$B2FRAME" verify "$G" "$T/trunc-end.b2frame" >/dev/null 2>&1
check "verify of a sound and a damaged file fails" test $? -eq 1

# A check that fails is made again under a shared lock, after a commit in progress (an OFD
# write lock, as b2fs takes it, held here for 2 s), and its problems are shown once.
# A sound frame is checked without waiting.
hold_lock() {  # file, seconds
    python3 - "$@" <<'EOF' &
import fcntl, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.fcntl(fd, 37, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0))   # F_OFD_SETLK
open(sys.argv[1] + ".held", "w").close()
time.sleep(float(sys.argv[2]))
EOF
    while [ ! -e "$1.held" ]; do sleep 0.05; done
}
hold_lock "$T/index-data.b2frame" 2
t0=$(date +%s%N)
"$B2FRAME" verify "$T/index-data.b2frame" >/dev/null 2>"$T/verr"
rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
wait
check "verify of a damaged frame under a commit waits for it (${ms} ms) and fails" \
    [ $rc -eq 1 -a $ms -ge 1500 ]
check "  each problem named once" \
    [ "$(sort "$T/verr" | uniq -d | wc -l)" -eq 0 -a -s "$T/verr" ]
cp "$G" "$T/locked-good.b2frame"
hold_lock "$T/locked-good.b2frame" 2
t0=$(date +%s%N)
"$B2FRAME" verify -q "$T/locked-good.b2frame"
rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
wait
check "verify of a sound frame under a commit does not wait (${ms} ms)" [ $rc -eq 0 -a $ms -lt 1500 ]

finish
