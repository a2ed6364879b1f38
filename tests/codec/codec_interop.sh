#!/bin/sh
# Interop with Debian's python3-blosc (c-blosc 1.21): chunks it makes decode in b2fs to
# the same bytes, and chunks b2fs makes in the Blosc1 form decode in c-blosc.
. "$top_srcdir/tests/lib/lib.sh"
TOOL="$top_builddir/tests/codec/chunktool"
[ -x "$TOOL" ] || skip_all "tests/codec/chunktool is not built"
$PY_BLOSC -c 'import blosc' 2>/dev/null || skip_all "$PY_BLOSC cannot import blosc (install python3-blosc)"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=$($PY_BLOSC "$top_srcdir/tests/codec/codec_interop.py" make "$dir") || { fail "python3-blosc made no chunks"; finish; exit 1; }
check "python3-blosc made $n chunks" [ "$n" -gt 300 ]

# c-blosc -> b2fs, whole chunks and a block range through a file reader
bad=0
for chunk in "$dir"/*.blosc; do
    base=${chunk%.blosc}
    if ! "$TOOL" d "$chunk" "$base.out" || ! cmp -s "$base.out" "$base.in"; then
        bad=$((bad + 1)); echo "differs: $(basename "$base")"
    fi
    [ -s "$base.in" ] || continue
    if ! "$TOOL" r 0 1 "$chunk" "$base.r0" || ! cmp -s "$base.r0" "$base.in" -n "$(wc -c < "$base.r0")"; then
        bad=$((bad + 1)); echo "block 0 differs: $(basename "$base")"
    fi
done
check "every c-blosc 1.21 chunk decodes in b2fs to the same bytes" [ "$bad" -eq 0 ]

# b2fs (Blosc1 form) -> c-blosc
for codec in lz4 lz4hc zlib zstd blosclz; do
    rm -f "$dir"/*.b2
    i=0
    for input in "$dir"/*.in; do
        i=$((i + 1))
        [ $((i % 3)) -eq 0 ] || continue     # a third of the inputs per codec
        case $((i % 5)) in
            0|3) filters=none ;; 1|4) filters=shuffle ;; *) filters=bitshuffle ;;
        esac
        ts=$(( (i % 4) == 0 ? 1 : (i % 4) == 1 ? 4 : (i % 4) == 2 ? 8 : 3 ))
        mode=$((1 + i % 4))
        bs=$(( (i % 2) * 4096 ))
        "$TOOL" c -1 -c $codec -l $((1 + i % 9)) -t $ts -f $filters -m $mode -b $bs \
            "$input" "${input%.in}.b2" || echo "encode failed: $input"
    done
    out=$($PY_BLOSC "$top_srcdir/tests/codec/codec_interop.py" check "$dir")
    rc=$?
    echo "$out" | grep -v '^same' || true
    total=$(echo "$out" | grep -c '^same')
    check "$codec: $total b2fs Blosc1-form chunks decode in c-blosc 1.21 to the same bytes" \
        [ $rc -eq 0 ] && [ "$total" -gt 50 ]
done
finish
