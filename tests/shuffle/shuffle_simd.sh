#!/bin/sh
# Runs the shuffle unit tests once per forced kernel set (B2FS_SIMD), so that the public
# functions are exercised through each set, and checks that the forced set is the one
# used whenever this CPU can run it.
. "$top_srcdir/tests/lib/lib.sh"

prog="$top_builddir/tests/shuffle/test_shuffle"
[ -x "$prog" ] || skip_all "$prog is not built"
same() { [ -n "$1" ] && [ "$1" = "$2" ]; }

for simd in generic sse2 avx2; do
    out=$(B2FS_SIMD=$simd "$prog" 2>&1)
    status=$?
    check "test_shuffle passes with B2FS_SIMD=$simd" [ $status -eq 0 ]
    used=$(printf '%s\n' "$out" | sed -n 's/^shuffle kernels in use: \([a-z0-9]*\).*/\1/p')
    case $simd in
    generic) want=generic ;;
    sse2) grep -qw sse2 /proc/cpuinfo 2>/dev/null && want=sse2 || want=$used ;;
    avx2) grep -qw avx2 /proc/cpuinfo 2>/dev/null && want=avx2 || want=$used ;;
    esac
    check "B2FS_SIMD=$simd uses $want (used: ${used:-nothing})" same "$used" "$want"
done
# An unknown value falls back to the best set, never fails.
out=$(B2FS_SIMD=neon "$prog" 2>&1)
check "an unknown B2FS_SIMD value falls back" [ $? -eq 0 ]
finish
