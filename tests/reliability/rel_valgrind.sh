#!/bin/bash
# Valgrind (memcheck): every unit test program (UNIT_TESTS, `make print-unit-tests`) with
# CK_FORK=no, then the b2fs daemon through a short mount session (write, read, append,
# truncate, xattrs, rename, remove, a 4 MiB copy with commits behind the writer, unmount). Each passes when valgrind reports no
# invalid access, no use of uninitialised values and no definite or possible leak.
# Slow (valgrind is 20-50x): not in TESTS; run with `make valgrind` in a build tree.
#   REL_VALGRIND_TESTS: the unit test programs (default: all)
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
command -v valgrind >/dev/null || skip_all "valgrind is not installed"
VG=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,possible
    --error-exitcode=99 --track-origins=yes --num-callers=30)
out=$(mktemp -d "${TMPDIR:-/tmp}/b2fs-vg.XXXXXX")
unit=${REL_VALGRIND_TESTS:-$(make -s -C "$top_builddir" print-unit-tests)}
for t in $unit; do
    start=$(date +%s)
    CK_FORK=no "${VG[@]}" --log-file="$out/$(basename "$t").vg" "$top_builddir/$t" \
        >"$out/$(basename "$t").out" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    summary=$(grep -E '^[0-9]+%: Checks' "$out/$(basename "$t").out" | tail -n 1)
    if [ $rc -eq 0 ] && [ ! -s "$out/$(basename "$t").vg" ]; then
        ok "$t under valgrind (${secs} s): $summary"
    else
        fail "$t under valgrind (exit $rc, ${secs} s): $summary"
        head -n 60 "$out/$(basename "$t").vg"
    fi
done

# the daemon: a short mount session under valgrind
if [ -c /dev/fuse ] && command -v fusermount3 >/dev/null && [ -x "$B2FS" ]; then
    WORK=$out/mount MNT=$out/mount/mnt BACK=$out/mount/back
    mkdir -p "$MNT" "$BACK"
    cp "$DATA/f32-zstd5-shuffle-t4-c262144-dict.b2frame" "$DATA/meta-lz4-t4.b2frame" "$BACK/"
    "${VG[@]}" --log-file="$out/b2fs.vg" "$B2FS" -f -o chunksize=64K,nthreads=2,dirty_size=1M \
        "$BACK" "$MNT" \
        2>"$out/b2fs.log" &
    vpid=$!
    for i in $(seq 1 600); do
        grep -q " $MNT fuse.b2fs " /proc/mounts && break
        kill -0 $vpid 2>/dev/null || break
        sleep 0.1
    done
    if grep -q " $MNT fuse.b2fs " /proc/mounts; then
        s=0
        cmp -s "$MNT/f32-zstd5-shuffle-t4-c262144-dict" \
            <("$B2FRAME" cat "$BACK/f32-zstd5-shuffle-t4-c262144-dict.b2frame") || s=1
        head -c 300000 /dev/urandom >"$out/r"
        cp "$out/r" "$MNT/new" && cat "$out/r" "$out/r" >"$out/rr" && cat "$out/r" >>"$MNT/new" || s=1
        cmp -s "$MNT/new" "$out/rr" || s=1
        truncate -s 100000 "$MNT/new" && truncate -s 500000 "$MNT/new" || s=1
        dd if=/dev/zero of="$MNT/new" bs=4096 seek=20 count=10 conv=notrunc status=none || s=1
        getfattr -d -m - "$MNT/meta-lz4-t4" >/dev/null 2>&1 || s=1
        setfattr -n user.blosc2.vlmeta.note -v hello "$MNT/new" || s=1
        setfattr -n user.tag -v x "$MNT/new" || s=1
        mv "$MNT/new" "$MNT/renamed" && ls -l "$MNT" >/dev/null || s=1
        head -c 1000 "$MNT/renamed" >/dev/null && rm "$MNT/renamed" || s=1
        # past half of dirty_size: commits run behind the writer (commit_behind.c)
        head -c 4M /dev/urandom >"$out/big"
        cp "$out/big" "$MNT/big" && cmp -s "$out/big" "$MNT/big" || s=1
        check "mount session under valgrind: every operation worked" [ $s -eq 0 ]
        for i in $(seq 1 50); do fusermount3 -u "$MNT" 2>/dev/null && break; sleep 0.2; done
    else
        fail "b2fs did not mount under valgrind"; cat "$out/b2fs.log"
    fi
    wait $vpid
    rc=$?
    if [ $rc -eq 0 ] && [ ! -s "$out/b2fs.vg" ]; then
        ok "b2fs daemon under valgrind: no errors, no leaks"
    else
        fail "b2fs daemon under valgrind: exit $rc"
        head -n 80 "$out/b2fs.vg"
    fi
else
    echo "no FUSE here: the daemon part is not run"
fi
rm -rf "$out"
finish
