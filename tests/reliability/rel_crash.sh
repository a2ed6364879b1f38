#!/bin/bash
# Crash test: writers on the mount (rel_crashwriter: writes, appends, truncates,
# fsyncs, close/reopens, each noted in a journal), SIGKILL of the b2fs daemon at a random
# moment, unmount, then: every frame in BACKING passes `b2frame verify`, each written file
# holds exactly the contents after some operation not older than its last fsync, files
# not being written keep their contents, and a new mount reads the same bytes.
#   REL_CRASH_ROUNDS (20) rounds; REL_CRASH_SEED (1) seeds the kill times and writers.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
. "$top_srcdir/tests/lib/rel_lib.sh"
need_fuse
WRITER="$top_builddir/tests/reliability/rel_crashwriter"
[ -x "$WRITER" ] || skip_all "tests/reliability/rel_crashwriter is not built"
rounds=${REL_CRASH_ROUNDS:-20}
RANDOM=${REL_CRASH_SEED:-1}
opts=(-o chunksize=64K)

# files that no writer touches: they must come through every crash unchanged
rel_mount "${opts[@]}" || { fail "mount"; finish; exit 1; }
head -c 3M /dev/urandom >"$WORK/still"
cp "$WORK/still" "$MNT/still"
seq 1 200000 >"$MNT/still_text"
seq 1 200000 | cmp - "$MNT/still_text" || fail "still_text reads back"
check "setup: unmount" rel_unmount

bad_rounds=0
wseed() { local x=0; [ "$2" = b ] && x=1; echo $(($1 * 2 + x + ${REL_CRASH_SEED:-1} * 100000)); }
for r in $(seq 1 "$rounds"); do
    round_ok=1
    rel_mount "${opts[@]}" || { fail "round $r: mount"; break; }
    pid=$(cat "$(rel_pidfile)")
    wpids=()
    for w in a b; do
        "$WRITER" -s "$(wseed $r $w)" write "$MNT/f$r$w" "$WORK/j$r$w" \
            2>"$WORK/w$r$w.err" &
        wpids+=($!)
    done
    # the kill comes 20 ms .. 1.5 s after the writers started
    sleep "$(printf '0.%03d' $((20 + RANDOM % 980)))"
    [ $((RANDOM % 3)) -eq 0 ] && sleep 0.5
    kill -KILL "$pid"
    for wp in "${wpids[@]}"; do
        wait "$wp" || { round_ok=0; echo "round $r: a writer saw wrong data or failed:"; cat "$WORK"/w$r?.err; }
    done
    wait "$pid" 2>/dev/null
    fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" 2>/dev/null
    rm -f "$(rel_pidfile)"
    if ! rel_frames_ok "$BACK"; then round_ok=0; echo "round $r: invalid frame after the kill"; fi
    for w in a b; do
        f="$BACK/f$r$w.b2frame"
        rm -f "$WORK/got"
        if [ -e "$f" ] && ! "$B2FRAME" cat "$f" >"$WORK/got"; then
            round_ok=0; echo "round $r: b2frame cat $f failed"
        fi
        # (a small file that did not compress became the plain file it shows as)
        [ -e "$f" ] || [ ! -e "$BACK/f$r$w" ] || cp "$BACK/f$r$w" "$WORK/got"
        out=$("$WRITER" -s "$(wseed $r $w)" check "$WORK/got" "$WORK/j$r$w")
        rc=$?
        echo "round $r$w: $out ($(tail -n 1 "$WORK/j$r$w"))"
        [ $rc -eq 0 ] || { round_ok=0; echo "round $r$w: journal:"; tail -n 5 "$WORK/j$r$w"; }
    done
    cmp -s <("$B2FRAME" cat "$BACK/still.b2frame") "$WORK/still" || { round_ok=0; echo "round $r: still changed"; }
    cmp -s <("$B2FRAME" cat "$BACK/still_text.b2frame") <(seq 1 200000) || { round_ok=0; echo "round $r: still_text changed"; }
    # a new mount reads what b2frame reads
    if rel_mount "${opts[@]}"; then
        for w in a b; do
            if [ ! -e "$BACK/f$r$w.b2frame" ]; then
                [ ! -e "$BACK/f$r$w" ] || cmp -s "$MNT/f$r$w" "$BACK/f$r$w" ||
                    { round_ok=0; echo "round $r: the new mount reads plain f$r$w differently"; }
                continue
            fi
            cmp -s "$MNT/f$r$w" <("$B2FRAME" cat "$BACK/f$r$w.b2frame") ||
                { round_ok=0; echo "round $r: the new mount reads f$r$w differently"; }
        done
        rm -f "$MNT/f$r"?
        rel_unmount || { round_ok=0; echo "round $r: unmount"; }
    else
        round_ok=0
    fi
    [ $round_ok -eq 1 ] || { bad_rounds=$((bad_rounds + 1)); tail -n 20 "$WORK/b2fs.log"; }
done
check "$rounds crash rounds: frames valid, contents of some commit, fsync'ed data kept ($bad_rounds bad)" \
    [ "$bad_rounds" -eq 0 ]
tmps=$(find "$BACK" -name '.b2fs-tmp-*' | wc -l)
echo "temporary files left in BACKING by killed daemons: $tmps"
finish
