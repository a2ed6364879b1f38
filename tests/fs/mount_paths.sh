#!/bin/bash
# Paths through the mount resolve beneath BACKING, with openat2 and, where it is missing
# (here: b2fs with tests/fs/noopenat2.so preloaded, whose syscall refuses openat2 with
# ENOSYS), one directory at a time: the same answers both ways, 20 directories down:
# reads, lists, creates, renames, removes, links and attributes; a temporary name in a
# path is not found.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
need_fuse
SHIM="$top_builddir/tests/fs/noopenat2.so"
[ -f "$SHIM" ] || { fail "tests/fs/noopenat2.so is not built"; finish; exit 1; }
deep=a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t
mkdir -p "$BACK/$deep" "$BACK/.b2fs-tmp-1-1"
echo deep >"$BACK/$deep/file"
echo temp >"$BACK/.b2fs-tmp-1-1/file"
seq 1 20000 >"$WORK/text"

paths_check() {  # LABEL
    check "$1: a file 20 directories down reads" [ "$(cat "$MNT/$deep/file" 2>&1)" = deep ]
    check "$1: a directory 20 down lists" [ "$(ls "$MNT/$deep")" = file ]
    check "$1: a file made 20 down" sh -c "echo new >'$MNT/$deep/new'"
    check "$1: ... is there in BACKING" [ -e "$BACK/$deep/new" ]
    check "$1: a directory made 20 down" mkdir "$MNT/$deep/dir"
    check "$1: a frame written 20 down" cp "$WORK/text" "$MNT/$deep/dir/text"
    check "$1: ... reads back" cmp "$WORK/text" "$MNT/$deep/dir/text"
    check "$1: ... is a frame in BACKING" [ -f "$BACK/$deep/dir/text.b2frame" ]
    check "$1: ... its attribute reads" getfattr -n user.blosc2.nbytes "$MNT/$deep/dir/text"
    check "$1: ... renamed 10 directories up" mv "$MNT/$deep/dir/text" "$MNT/a/b/c/d/e/f/g/h/i/j/text"
    check "$1: ... reads there" cmp "$WORK/text" "$MNT/a/b/c/d/e/f/g/h/i/j/text"
    check "$1: a symlink made 20 down reads" \
        sh -c "ln -s ../../file '$MNT/$deep/dir/link' && [ \"\$(readlink '$MNT/$deep/dir/link')\" = ../../file ]"
    check "$1: a hard link made 20 down" ln "$MNT/$deep/file" "$MNT/$deep/dir/hard"
    check "$1: ... shows 2 links" [ "$(stat -c %h "$MNT/$deep/file")" = 2 ]
    check "$1: removed again" sh -c "rm -r '$MNT/$deep/dir' '$MNT/a/b/c/d/e/f/g/h/i/j/text'"
    check "$1: ... and gone from BACKING" \
        sh -c "[ ! -e '$BACK/$deep/dir' ] && [ ! -e '$BACK/a/b/c/d/e/f/g/h/i/j/text.b2frame' ]"
    check "$1: a path through a temporary name is not found" \
        not cat "$MNT/.b2fs-tmp-1-1/file"
    check "$1: '.' and '//' resolve" [ "$(cat "$MNT/a/./b//c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/file")" = deep ]
    rm -f "$BACK/$deep/new"
}

mount_b2fs || fail "a mount"
paths_check "openat2"
check "openat2: unmount" unmount_b2fs

LD_PRELOAD=$SHIM NOOPENAT2_MARK="$WORK/refused" mount_b2fs || fail "a mount without openat2"
paths_check "without openat2"
check "without openat2: the preload refused openat2 (the walk ran)" [ -e "$WORK/refused" ]
check "without openat2: unmount" unmount_b2fs
finish
