#!/bin/bash
# Random operations against a model (b2fsx): writes, reads, truncates, fallocate,
# mmap reads and writes, fsync, close/reopen and remounts on a b2fs file, compared with
# the same operations on a plain file after every step.
#   REL_RANDOM_OPS (20000) operations per seed, seeds 1 2 3 with 64 KiB chunks and a
#   remount every REL_RANDOM_EVERY (2500) operations, seed 4 with the default options.
# A long run by hand (1,000,000 operations) is in docs/TESTING.md.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
. "$top_srcdir/tests/lib/rel_lib.sh"
need_fuse
B2FSX="$top_builddir/tests/reliability/b2fsx"
[ -x "$B2FSX" ] || skip_all "tests/reliability/b2fsx is not built"
ops=${REL_RANDOM_OPS:-20000}
every=${REL_RANDOM_EVERY:-2500}

# run_seed SEED B2FS-ARGS...: a fresh mount, b2fsx with remounts, frames valid afterwards
run_seed() {
    local seed=$1; shift
    rm -rf "${BACK:?}"/* "$WORK/model"
    rel_mount "$@" || { fail "seed $seed: mount"; return; }
    if "$B2FSX" -q -s "$seed" -n "$ops" -m $((6 << 20)) -r "$every" \
        -R "$(rel_remount_cmd "$@")" "$MNT/x" "$WORK/model" >"$WORK/b2fsx.out" 2>&1; then
        ok "seed $seed ($*): $(tail -n 1 "$WORK/b2fsx.out")"
    else
        fail "seed $seed ($*): b2fsx found a difference"
        tail -n 40 "$WORK/b2fsx.out"
        tail -n 20 "$WORK/b2fs.log"
    fi
    check "seed $seed: unmount" rel_unmount
    check "seed $seed: backing frame valid after unmount" rel_frames_ok "$BACK"
    check "seed $seed: frame holds the model's bytes" \
        cmp <("$B2FRAME" cat "$BACK/x.b2frame") "$WORK/model"
}

for seed in 1 2 3; do
    run_seed $seed -o chunksize=64K
done
run_seed 4
finish
