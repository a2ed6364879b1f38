#!/bin/bash
# The layering rules of docs/ARCHITECTURE.md hold in the build: no call cycle between the
# files of a layer, and every call goes to a layer below (contrib/check-calls).
. "$top_srcdir/tests/lib/lib.sh"
command -v nm >/dev/null || skip_all "nm (binutils) is not installed"
out=$(python3 "$top_srcdir/contrib/check-calls" "$top_builddir" 2>&1)
while IFS= read -r line; do
    case $line in
    PASS:*) check "${line#PASS: }" true ;;
    FAIL:*) echo "$line"; check "${line#FAIL: }" false ;;
    esac
done <<<"$out"
check "check-calls ran" grep -q "passed" <<<"$out"
finish
