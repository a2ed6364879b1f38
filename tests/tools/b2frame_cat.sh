#!/bin/sh
# b2frame cat and info against the reference files: every frame, Bloscpack file and
# Blosc1 chunk decodes to its MANIFEST sha256; info reports the manifest's parameters and
# the metalayers and vlmetalayers of meta-lz4-t4.b2frame.
. "$top_srcdir/tests/lib/lib.sh"
B2FRAME="$top_builddir/contrib/b2frame"
[ -x "$B2FRAME" ] || skip_all "contrib/b2frame is not built"
command -v sha256sum >/dev/null || skip_all "sha256sum is missing"
command -v python3 >/dev/null || skip_all "python3 is missing"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

# cat_matches FILE NBYTES SHA256: cat exits 0 and gives exactly those bytes.
cat_matches() {
    "$B2FRAME" cat "$1" >"$T/out" 2>"$T/err" || { echo "  cat failed: $(cat "$T/err")"; return 1; }
    size=$(wc -c <"$T/out")
    sum=$(sha256sum "$T/out" | cut -d' ' -f1)
    [ "$size" -eq "$2" ] && [ "$sum" = "$3" ] || { echo "  got $size bytes, sha256 $sum"; return 1; }
}

# field NAME: the value of "NAME: value" in the last info output.
field() { sed -n "s/^$1: //p" "$T/info"; }

# Frames: contents and parameters.
n=0
while IFS='	' read -r file nbytes sha codec clevel typesize filters chunksize blocksize nchunks note; do
    [ "$file" = file ] && continue
    n=$((n + 1))
    check "cat $file" cat_matches "$DATA/$file" "$nbytes" "$sha"
    if "$B2FRAME" info "$DATA/$file" >"$T/info" 2>"$T/err"; then
        bad=""
        for kv in "kind=frame" "codec=$codec" "clevel=$clevel" "typesize=$typesize" \
                  "filters=$filters" "chunksize=$chunksize" "nchunks=$nchunks" "nbytes=$nbytes"; do
            got=$(field "${kv%%=*}")
            [ "$got" = "${kv#*=}" ] || bad="$bad ${kv%%=*}=$got (manifest ${kv#*=})"
        done
        if [ -z "$bad" ]; then ok "info $file"; else fail "info $file:$bad"; fi
    else
        fail "info $file: $(cat "$T/err")"
    fi
done <"$DATA/MANIFEST.tsv"
[ "$n" -gt 20 ] || fail "only $n frames in the manifest"

# Bloscpack files (reference and extra ones).
for dir in bloscpack bloscpack-extra; do
    while IFS='	' read -r file nbytes sha rest; do
        [ "$file" = file ] && continue
        check "cat $dir/$file" cat_matches "$DATA/$dir/$file" "$nbytes" "$sha"
        "$B2FRAME" info "$DATA/$dir/$file" >"$T/info" 2>&1
        check "info $dir/$file says bloscpack, $nbytes bytes" \
            test "$(field kind) $(field nbytes)" = "bloscpack $nbytes"
    done <"$DATA/$dir/MANIFEST.tsv"
done

# Single Blosc1 chunks; the snappy ones must be refused with a reason naming the file.
while IFS='	' read -r file nbytes sha codec rest; do
    [ "$file" = file ] && continue
    if [ "$codec" = snappy ]; then
        if "$B2FRAME" cat "$DATA/blosc1/$file" >"$T/out" 2>"$T/err"; then
            fail "cat blosc1/$file (snappy) succeeded"
        elif grep -q "$file" "$T/err" && grep -qi "codec" "$T/err"; then
            ok "cat blosc1/$file refused: $(cat "$T/err")"
        else
            fail "cat blosc1/$file: unclear error: $(cat "$T/err")"
        fi
        continue
    fi
    check "cat blosc1/$file" cat_matches "$DATA/blosc1/$file" "$nbytes" "$sha"
    "$B2FRAME" info "$DATA/blosc1/$file" >"$T/info" 2>&1
    check "info blosc1/$file says chunk, $codec" test "$(field kind) $(field codec)" = "chunk ${codec%hc}"
done <"$DATA/blosc1/MANIFEST.tsv"

# Single Blosc2 chunks made by C-Blosc2 (tests/data/codec).
while IFS='	' read -r file nbytes sha rest; do
    [ "$file" = file ] && continue
    check "cat codec/$file" cat_matches "$DATA/codec/$file" "$nbytes" "$sha"
done <"$DATA/codec/MANIFEST.tsv"

# Metalayers and vlmetalayers of meta-lz4-t4.b2frame (see tests/data/FIXTURES.md).
META="$DATA/meta-lz4-t4.b2frame"
"$B2FRAME" info "$META" >"$T/info" 2>&1
check "info: metalayer units" test "$(field meta.units)" = "6 bytes, hex a568656c6c6f"
check "info: metalayer dims" test "$(field meta.dims)" = "4 bytes, hex 93010203"
check "info: vlmetalayer attrs" test "$(field vlmeta.attrs)" = '34 bytes, text {"sensor": "t-17", "rate_hz": 100}'
check "info: vlmetalayer history" test "$(field vlmeta.history | cut -d, -f1)" = "5000 bytes"
check "info: counts" test "$(field metalayers) $(field vlmetalayers)" = "2 2"

printf '\245hello' >"$T/units"
printf '\223\001\002\003' >"$T/dims"
printf '{"sensor": "t-17", "rate_hz": 100}' >"$T/attrs"
# history: 5000 bytes, byte i = i mod 251
python3 -c 'import sys; sys.stdout.buffer.write(bytes(i % 251 for i in range(5000)))' >"$T/history"
[ "$(wc -c <"$T/history")" -eq 5000 ] || fail "could not make the expected history bytes"
for name in units dims attrs history; do
    if "$B2FRAME" meta "$META" "$name" >"$T/got" 2>"$T/err" && cmp -s "$T/got" "$T/$name"; then
        ok "meta $name content"
    else
        fail "meta $name content: $(cat "$T/err")"
    fi
done
"$B2FRAME" meta "$META" >"$T/list" 2>&1
check "meta lists all four" test "$(cut -d: -f1 "$T/list" | tr '\n' ' ')" = \
    "meta.units meta.dims vlmeta.attrs vlmeta.history "
if "$B2FRAME" meta "$META" nosuch >"$T/got" 2>"$T/err"; then
    fail "meta of a missing name succeeded"
else
    check "meta of a missing name names file and name" grep -q "meta-lz4-t4.b2frame.*nosuch" "$T/err"
fi

# --json: one object with the same facts.
"$B2FRAME" info --json "$META" >"$T/json" 2>&1
check "info --json parses and agrees" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["codec"] == "lz4" and d["typesize"] == 4 and d["nbytes"] == 787432, d
assert [m["name"] for m in d["metalayers"]] == ["units", "dims"]
assert d["metalayers"][0]["hex"] == "a568656c6c6f"
assert [m["name"] for m in d["vlmetalayers"]] == ["attrs", "history"]
assert d["vlmetalayers"][0]["text"] == "{\"sensor\": \"t-17\", \"rate_hz\": 100}"
assert bytes.fromhex(d["vlmetalayers"][1]["hex"]) == bytes(i % 251 for i in range(5000))
' "$T/json"

# --chunks: one line per chunk; special-zstd-t8 has zeros, NaN and repeated-value chunks.
"$B2FRAME" info --chunks "$DATA/special-zstd-t8-c262144.b2frame" >"$T/info" 2>&1
check "info --chunks: 10 chunks, 4 zeros, 2 nan, 2 value" test \
    "$(grep -c '^chunk\.' "$T/info") $(grep -c 'special zeros,' "$T/info") $(grep -c 'special nan,' "$T/info") $(grep -c 'special value,' "$T/info")" = "10 4 2 2"
check "info --chunks: offsets" test "$(field chunk.9 | cut -d, -f1)" = "offset 2359296"

# Errors name the file and the reason.
printf 'not a frame at all' >"$T/junk"
"$B2FRAME" cat "$T/junk" >/dev/null 2>"$T/err"
rc=$?
check "cat of junk fails with a message naming it" test "$rc" -eq 1 -a -n "$(grep "$T/junk: " "$T/err")"
"$B2FRAME" cat "$T/missing" >/dev/null 2>"$T/err"
check "cat of a missing file names it" grep -q "$T/missing: No such file" "$T/err"
"$B2FRAME" frobnicate >/dev/null 2>&1
check "unknown command: exit 2" test $? -eq 2
check "--help" sh -c "'$B2FRAME' --help | grep -q '^Usage: b2frame COMMAND'"
check "--version" sh -c "'$B2FRAME' --version | grep -q '^b2frame (b2fs) '"
check "--version names the libraries it runs with" sh -c "'$B2FRAME' --version | grep -Eq '^lz4 [0-9.]+, zstd [0-9.]+, zlib [0-9.]+, xxhash [0-9.]+\$'"
for cmd in info cat pack unpack verify compact meta; do
    check "$cmd --help" sh -c "'$B2FRAME' $cmd --help | grep -q 'Usage: b2frame $cmd'"
done

finish
