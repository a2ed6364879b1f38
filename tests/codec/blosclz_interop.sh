#!/bin/sh
# BloscLZ both ways with c-blosc 1.21 (Debian's python3-blosc): Blosc1-form chunks that
# b2fs writes decode in python3-blosc to the same bytes, and python3-blosc's chunks
# decode in b2fs, for clevels 1, 5 and 9 on float, integer, text and random data.
. "$top_srcdir/tests/lib/lib.sh"

TOOL="$top_builddir/tests/codec/chunktool"
[ -x "$TOOL" ] || skip_all "tests/codec/chunktool is not built"
"$PY_BLOSC" -c 'import blosc, numpy' 2>/dev/null || skip_all "$PY_BLOSC cannot import blosc and numpy"

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# Test data, deterministic: sizes that are not whole blocks, so leftover blocks occur.
"$PY_BLOSC" - "$W" <<'EOF' || { echo "cannot make test data"; exit 1; }
import sys, numpy as np, glob
w = sys.argv[1]
rng = np.random.default_rng(42)
n = 75001
np.cumsum(rng.normal(0, 1, n)).astype(np.float32).tofile(w + "/float")
(np.arange(n, dtype=np.int32) * 7 + rng.integers(0, 100, n, dtype=np.int32)).tofile(w + "/int")
text = b""
for p in sorted(glob.glob("/usr/include/*.h")):
    text += open(p, "rb").read()
    if len(text) > 300007:
        break
if len(text) < 100000:  # no headers installed: made-up text instead
    words = [b"chunk", b"frame", b"block", b"the", b"of", b"static", b"int", b"return;\n"]
    text = b" ".join(words[i] for i in rng.integers(0, len(words), 60000))
open(w + "/text", "wb").write(text[:300007])
open(w + "/random", "wb").write(rng.bytes(300003))
EOF

# python3-blosc helpers: enc IN OUT CLEVEL TYPESIZE SHUFFLE | dec IN OUT | info IN
PY='
import sys, blosc
blosc.set_nthreads(1)
cmd = sys.argv[1]
if cmd == "enc":
    data = open(sys.argv[2], "rb").read()
    shuf = {"none": blosc.NOSHUFFLE, "shuffle": blosc.SHUFFLE, "bitshuffle": blosc.BITSHUFFLE}[sys.argv[6]]
    open(sys.argv[3], "wb").write(blosc.compress(data, typesize=int(sys.argv[5]), clevel=int(sys.argv[4]),
                                                 shuffle=shuf, cname="blosclz"))
elif cmd == "dec":
    open(sys.argv[3], "wb").write(blosc.decompress(open(sys.argv[2], "rb").read()))
else:
    c = open(sys.argv[2], "rb").read()
    nbytes, cbytes, bs = blosc.get_cbuffer_sizes(c)
    print(blosc.get_clib(c), nbytes, cbytes, bs, c[2] & 2)
'
py() { "$PY_BLOSC" -c "$PY" "$@"; }

# kind typesize filters
for spec in "float 4 shuffle" "int 4 shuffle" "int 4 bitshuffle" "text 1 none" "random 8 shuffle"; do
    set -- $spec
    kind=$1 ts=$2 filt=$3
    for cl in 1 5 9; do
        tag="$kind t$ts $filt clevel $cl"
        # b2fs -> c-blosc
        if "$TOOL" c -1 -c blosclz -l "$cl" -t "$ts" -f "$filt" "$W/$kind" "$W/b2.blosc" &&
           py dec "$W/b2.blosc" "$W/b2.out" && cmp -s "$W/$kind" "$W/b2.out"; then
            ok "$tag: b2fs chunk decodes in python3-blosc"
        else
            fail "$tag: b2fs chunk does not decode in python3-blosc"
        fi
        # the chunk really is BloscLZ, and compressed unless the data is random
        set -- $(py info "$W/b2.blosc")
        if [ "$1" = BloscLZ ] && { [ "$kind" = random ] || [ "$5" = 0 -a "$3" -lt "$2" ]; }; then
            ok "$tag: b2fs chunk is BloscLZ, $3 of $2 bytes"
        else
            fail "$tag: b2fs chunk is $1, $3 of $2 bytes, memcpyed flag $5"
        fi
        # c-blosc -> b2fs
        if py enc "$W/$kind" "$W/ref.blosc" "$cl" "$ts" "$filt" &&
           "$TOOL" d "$W/ref.blosc" "$W/ref.out" && cmp -s "$W/$kind" "$W/ref.out"; then
            ok "$tag: python3-blosc chunk decodes in b2fs"
        else
            fail "$tag: python3-blosc chunk does not decode in b2fs"
        fi
        # same parameters and blocksize: compressed size within 3% of c-blosc's
        set -- $(py info "$W/ref.blosc")
        refc=$3 bs=$4
        "$TOOL" c -1 -c blosclz -l "$cl" -t "$ts" -f "$filt" -b "$bs" "$W/$kind" "$W/b2bs.blosc"
        set -- $(py info "$W/b2bs.blosc")
        if [ $(( $3 * 100 )) -le $(( refc * 103 )) ] && [ $(( $3 * 103 )) -ge $(( refc * 100 )) ]; then
            ok "$tag: blocksize $bs: $3 bytes, c-blosc $refc"
        else
            fail "$tag: blocksize $bs: $3 bytes, c-blosc $refc (more than 3% apart)"
        fi
    done
done
finish
