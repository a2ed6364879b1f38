#!/bin/bash
# b2frame unpack of every array of tests/data/b2nd into a .npy file gives the C-order bytes
# C-Blosc2 gives (np.load reads it); pack --npy of that file gives an array frame whose
# .npy file is the same again, with python-blosc2's shapes; what is no .npy file b2frame
# stores as an array is refused with the reason; unpack to another name gives the raw
# chunk contents as before.
. "$top_srcdir/tests/lib/lib.sh"
B2FRAME="$top_builddir/contrib/b2frame"
ND="$top_srcdir/tests/data/b2nd"
PY=/usr/bin/python3
[ -x "$B2FRAME" ] || skip_all "contrib/b2frame is not built"
$PY -c 'import numpy' 2>/dev/null || skip_all "python3-numpy is not installed"
not() { ! "$@"; }
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

c_order_sha() {
    $PY -c 'import numpy as np, sys, hashlib
a = np.load(sys.argv[1])
print(hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest())' "$1"
}
while IFS=$'\t' read -r file sha; do
    n=${file%.b2nd}
    check "unpack $n to .npy" "$B2FRAME" unpack "$ND/$file" "$T/$n.npy"
    check "... np.load gives C-Blosc2's C order" [ "$(c_order_sha "$T/$n.npy")" = "$sha" ]
    check "pack --npy $n" "$B2FRAME" pack --npy -c zstd -l 3 "$T/$n.npy" "$T/$n.b2nd"
    check "... unpacks to the same .npy file" sh -c '"$1" unpack "$2" "$3" && cmp "$3" "$4"' sh \
        "$B2FRAME" "$T/$n.b2nd" "$T/$n.again.npy" "$T/$n.npy"
done < <(tail -n +2 "$ND/SOURCES.tsv" | cut -f1,6)
check "pack --npy chooses python-blosc2's shapes" grep -qx "b2nd.blockshape: 20,700" \
    <("$B2FRAME" info "$T/i4_2d.b2nd")
check "unpack to another name writes the chunks' contents" "$B2FRAME" unpack "$ND/i4_2d.b2nd" "$T/raw"
check "... chunk by chunk, padding included" [ "$(stat -c %s "$T/raw")" = 4608000 ]
$PY -c 'import numpy as np; np.save("'"$T"'/f.npy", np.asfortranarray(np.ones((3, 4))))'
check "pack --npy refuses Fortran order" not "$B2FRAME" pack --npy "$T/f.npy" "$T/f.b2nd"
check "... saying so" grep -q "Fortran order" <("$B2FRAME" pack --npy "$T/f.npy" "$T/f.b2nd" 2>&1)
check "... and leaves no file" not [ -e "$T/f.b2nd" ]
check "pack --npy refuses a text file" not "$B2FRAME" pack --npy /etc/hostname "$T/h.b2nd"
finish
