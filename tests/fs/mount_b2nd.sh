#!/bin/bash
# Array frames (a b2nd metalayer), as written by Caterva2 and C-Blosc2: b2frame info and
# the mount's user.blosc2.b2nd.* attributes give shape, chunk and block shapes and dtype as
# text, and meta.b2nd as JSON; older layouts (no dtype) and 0-dimensional arrays too.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
B2FRAME="$top_builddir/contrib/b2frame"
ND="$top_srcdir/tests/data/b2nd"

# FILE|SHAPE|CHUNKSHAPE|BLOCKSHAPE|DTYPE (a 0-dimensional array has empty shapes; the
# older layout no dtype)
cases() {
    cat <<'T'
caterva2-ds-2d|10,20|5,5|2,3|<u2
caterva2-ds-3d|3,4,5|2,3,4|2,2,2|<f4
caterva2-ds-4d|2,3,4,5|1,2,3,4|1,2,2,2|<c16
caterva2-ds-1d-fields|1000|100|10|[('a', '<i4'), ('b', '<f8'), ('c', 'S10'), ('d', '?')]
caterva2-ds-sc-attr||||<U6
c-blosc2-2023-example_float_cyclic|40,60,20|20,30,16|11,14,7|
T
}

info_has() { grep -qxF "$2" <("$B2FRAME" info "$ND/$1.b2nd"); }
while IFS='|' read -r f shape chunk block dtype; do
    check "info $f: shape" info_has "$f" "b2nd.shape: $shape"
    check "info $f: chunkshape" info_has "$f" "b2nd.chunkshape: $chunk"
    check "info $f: blockshape" info_has "$f" "b2nd.blockshape: $block"
    check "info $f: dtype" info_has "$f" "b2nd.dtype: $dtype"
done < <(cases)
check "info --json has the b2nd object" grep -qF '"b2nd": {"shape": "3,4,5", "chunkshape": "2,3,4", "blockshape": "2,2,2", "dtype": "<f4"}' \
    <("$B2FRAME" info --json "$ND/caterva2-ds-3d.b2nd")

need_fuse
command -v getfattr >/dev/null || skip_all "getfattr (package attr) is not installed"
cp "$ND"/*.b2nd "$BACK/"
cp "$DATA/meta-lz4-t4.b2frame" "$BACK/plain.b2frame"
mount_b2fs || { fail "mount"; finish; exit 1; }
get() { getfattr --only-values -n "user.blosc2.$1" "$MNT/$2" 2>/dev/null; }
while IFS='|' read -r f shape chunk block dtype; do
    check "xattr $f: shape" [ "$(get b2nd.shape "$f.npy")" = "$shape" ]
    check "xattr $f: chunkshape" [ "$(get b2nd.chunkshape "$f.npy")" = "$chunk" ]
    check "xattr $f: blockshape" [ "$(get b2nd.blockshape "$f.npy")" = "$block" ]
    check "xattr $f: dtype" [ "$(get b2nd.dtype "$f.npy")" = "$dtype" ]
done < <(cases)
check "listed by getfattr -d" grep -q 'user.blosc2.b2nd.shape="10,20"' \
    <(getfattr -d -m 'user.blosc2.b2nd' "$MNT/caterva2-ds-2d.npy")
check "meta.b2nd is JSON text" /usr/bin/python3 -c '
import json, os, sys
v = json.loads(os.getxattr(sys.argv[1], "user.blosc2.meta.b2nd"))
want = {"version": 0, "ndim": 4, "shape": [2, 3, 4, 5], "chunkshape": [1, 2, 3, 4],
        "blockshape": [1, 2, 2, 2], "dtype_format": 0, "dtype": "<c16"}
sys.exit(0 if v == want else "got %r" % v)' "$MNT/caterva2-ds-4d.npy"
check "a structured dtype with quotes stays valid JSON" /usr/bin/python3 -c '
import json, os, sys
v = json.loads(os.getxattr(sys.argv[1], "user.blosc2.meta.b2nd"))
sys.exit(0 if v["dtype"].startswith("[(") else "got %r" % v)' "$MNT/caterva2-ds-1d-fields.npy"
check "a frame without a b2nd metalayer has no b2nd attributes" not getfattr -n user.blosc2.b2nd.shape "$MNT/plain"
unmount_b2fs
finish
