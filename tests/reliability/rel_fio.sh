#!/bin/bash
# Concurrency: fio, 4 jobs of random reads and writes with verify=crc32c (checked while
# running and again at the end), on one shared file (each job its own region, the
# regions 32 KiB off chunk boundaries so neighbours share chunks) and on one file each;
# then readers (O_DIRECT, so every read is b2fs's) during a writer's writes, in a new file
# still plain (new_plain) and in a frame (its commits): every self-checking record they
# read is whole (rel_torn).
#   REL_FIO_SIZE (4M) bytes per job, REL_TORN_SECONDS (15) for the readers and writer.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
. "$top_srcdir/tests/lib/rel_lib.sh"
need_fuse
command -v fio >/dev/null || skip_all "fio is not installed"
TORN="$top_builddir/tests/reliability/rel_torn"
[ -x "$TORN" ] || skip_all "tests/reliability/rel_torn is not built"
size=${REL_FIO_SIZE:-4M}
secs=${REL_TORN_SECONDS:-15}

# run_fio NAME FIO-ARGS...: passes when fio exits 0 and reports no verify error
run_fio() {
    local name=$1; shift
    fio --name="$name" --ioengine=psync --rw=randrw --bsrange=4k-64k --bs_unaligned=0 \
        --numjobs=4 --size="$size" --verify=crc32c --verify_backlog=16 --verify_fatal=0 \
        --fsync=16 --verify_state_save=0 --group_reporting --output="$WORK/fio-$name.out" "$@" >/dev/null 2>&1
    local rc=$? errs
    errs=$(grep -ciE 'verify.*(bad|fail|mismatch)|bad magic|crc32c.*wanted' "$WORK/fio-$name.out")
    grep -E 'err=|^  (read|write):' "$WORK/fio-$name.out" | head -n 4
    if [ $rc -eq 0 ] && [ "$errs" -eq 0 ]; then
        ok "fio $name: 4 jobs, random reads and writes, 0 verify errors"
    else
        fail "fio $name: exit $rc, $errs verify error lines"
        grep -iE 'verify|error|bad' "$WORK/fio-$name.out" | head -n 20
        tail -n 10 "$WORK/b2fs.log"
    fi
}

rel_mount -o chunksize=64K || { fail "mount"; finish; exit 1; }
run_fio shared --filename="$MNT/shared" --offset_increment=4128k
run_fio separate --directory="$MNT"
sum_before=$(cat "$MNT/shared" "$MNT"/separate.* | sha256sum)
check "unmount after fio" rel_unmount
check "frames valid after fio" rel_frames_ok "$BACK"
rel_mount -o chunksize=64K || { fail "remount"; finish; exit 1; }
check "fio's files read the same after a remount" \
    [ "$(cat "$MNT/shared" "$MNT"/separate.* | sha256sum)" = "$sum_before" ]

# torn records: 64 KiB records (one per chunk) and 24 KiB ones (straddling chunks); by
# default in a new file written plain (new_plain), then in frames (new_plain=off)
torn_rounds() {  # LABEL [BACKING SUFFIX]
for rec in 65536 24576; do
    nrecs=$(( (4 << 20) / rec ))
    "$TORN" init "$MNT/torn$rec" $rec $nrecs 0 || fail "init torn$rec"
    "$TORN" write "$MNT/torn$rec" $rec $nrecs "$secs" >"$WORK/torn-w.out" 2>&1 &
    wpid=$!
    rpids=()
    for i in 1 2 3 4 5 6; do
        "$TORN" read "$MNT/torn$rec" $rec $nrecs "$secs" >"$WORK/torn-r$i.out" 2>&1 &
        rpids+=($!)
    done
    sleep 1
    check "$1: (BACKING holds torn$rec$2 meanwhile)" test -f "$BACK/torn$rec$2"
    bad=0
    for p in "${rpids[@]}"; do wait "$p" || bad=$((bad + 1)); done
    wait $wpid || bad=$((bad + 1))
    cat "$WORK"/torn-r1.out "$WORK/torn-w.out"
    check "$1: records of $rec bytes: 6 readers during a writer's writes, none torn ($bad processes failed)" \
        [ $bad -eq 0 ]
    [ $bad -eq 0 ] || cat "$WORK"/torn-r*.out
    check "  ... every record whole after the writer stopped" "$TORN" read "$MNT/torn$rec" $rec $nrecs 1
    rm -f "$MNT/torn$rec"
done
}
# (new_plain named: off by default where BACKING is on a network file system)
rel_unmount && rel_mount -o chunksize=64K,new_plain=on,compress_idle=2 || { fail "remount with new_plain=on"; finish; exit 1; }
torn_rounds "plain files"
rel_unmount && rel_mount -o chunksize=64K,new_plain=off || { fail "remount with new_plain=off"; finish; exit 1; }
torn_rounds "frames" .b2frame
check "unmount" rel_unmount
check "frames valid" rel_frames_ok "$BACK"
finish
