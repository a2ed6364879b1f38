#!/bin/bash
# Paths through the mount resolve beneath BACKING, with openat2 and, where it is missing
# (here: b2fs with tests/fs/nosyscall.so preloaded, whose syscall refuses openat2 with
# ENOSYS), one directory at a time: the same answers both ways, 20 directories down:
# reads, lists, creates, renames, removes, links and attributes; a temporary name in a
# path is not found. And changes made in BACKING beside a mount (files made, renamed,
# exchanged, a directory replaced, more changes than inotify's queue holds) show through
# it once the kernel's entries expire, with the names of directories kept in memory (the
# default on ext4) and with name_cache=off.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
# new files made frames at their create (not written plain first, new_plain): this suite
# looks at frames as they are written
B2FS_SUITE_OPTS=new_plain=off
need_fuse
SHIM="$top_builddir/tests/fs/nosyscall.so"
[ -f "$SHIM" ] || { fail "tests/fs/nosyscall.so is not built"; finish; exit 1; }
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

# renameat2(RENAME_EXCHANGE) of two names in BACKING
exchange() {
    python3 -c 'import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True)
sys.exit(libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 2) != 0)' "$1" "$2"
}

beside_check() {  # LABEL: the kernel keeps a name 1 s, a missing one 0.2 s
    mkdir -p "$BACK/side"
    check "$1: a name not there" not stat "$MNT/side/made"
    echo made >"$BACK/side/made"
    sleep 0.3
    check "$1: ... made in BACKING shows" [ "$(cat "$MNT/side/made" 2>&1)" = made ]
    check "$1: a frame written" cp "$WORK/text" "$MNT/side/f"
    check "$1: ... renamed in BACKING" mv "$BACK/side/f.b2frame" "$BACK/side/g.b2frame"
    sleep 1.2
    check "$1: ... shows under its new name" cmp "$WORK/text" "$MNT/side/g"
    check "$1: ... not under the old" not stat "$MNT/side/f"
    echo one >"$BACK/side/e1"
    echo two >"$BACK/side/e2"
    check "$1: two files read" [ "$(cat "$MNT/side/e1" "$MNT/side/e2")" = "one
two" ]
    check "$1: ... exchanged in BACKING" exchange "$BACK/side/e1" "$BACK/side/e2"
    sleep 1.2
    check "$1: ... both show, exchanged" [ "$(cat "$MNT/side/e1" "$MNT/side/e2" 2>&1)" = "two
one" ]
    mkdir "$BACK/side/dir"
    echo a >"$BACK/side/dir/a"
    check "$1: a directory made in BACKING lists" [ "$(ls "$MNT/side/dir")" = a ]
    check "$1: ... its file reads" [ "$(cat "$MNT/side/dir/a")" = a ]
    rm -r "$BACK/side/dir"
    mkdir "$BACK/side/dir"
    echo b >"$BACK/side/dir/b"
    sleep 1.2
    check "$1: ... replaced in BACKING by another: its file reads" [ "$(cat "$MNT/side/dir/b" 2>&1)" = b ]
    check "$1: ... the old one's does not" not stat "$MNT/side/dir/a"
    check "$1: a name not there, again" not stat "$MNT/side/late"
    python3 -c 'import os, sys
for i in range(12000):
    p = os.path.join(sys.argv[1], "churn")
    open(p, "w").close(); os.unlink(p)
open(os.path.join(sys.argv[1], "late"), "w").write("late\n")' "$BACK/side"
    sleep 0.3
    check "$1: ... made after 24,000 changes in BACKING, shows" [ "$(cat "$MNT/side/late" 2>&1)" = late ]
    rm -r "$BACK/side"
}

mount_b2fs || fail "a mount"
beside_check "names kept"
check "names kept: unmount" unmount_b2fs
mount_b2fs -o name_cache=off || fail "a mount with name_cache=off"
beside_check "name_cache=off"
check "name_cache=off: unmount" unmount_b2fs
check "--help tells of name_cache" sh -c "'$B2FS' --help | grep -q 'name_cache=on|off'"

LD_PRELOAD=$SHIM NOSYSCALL=openat2 NOSYSCALL_MARK="$WORK/refused" mount_b2fs || fail "a mount without openat2"
paths_check "without openat2"
check "without openat2: the preload refused openat2 (the walk ran)" [ -e "$WORK/refused" ]
check "without openat2: unmount" unmount_b2fs
finish
