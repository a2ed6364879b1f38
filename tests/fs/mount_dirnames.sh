#!/bin/bash
# The names of directories kept in memory (fs/dirnames) where a directory's listing is not
# the names a lookup finds: an encrypted directory (fscrypt, ext4) listed while its key is
# missing shows its names encoded; once the key is added its files must be found by their
# names, through the same mount. BACKING is an ext4 made with the encrypt feature in a
# loop device; the key and the policy are set with the fscrypt ioctls (v2). Run with names
# kept (the default: the daemon then holds an inotify descriptor, and one of a directory
# where a missing name was looked up) and with name_cache=off. Then BACKING on XFS: names
# kept where b2fs was built with xfslibs-dev (it tells a case-insensitive XFS by its
# geometry), not kept otherwise.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
need_fuse
backing_on_ext4 -O encrypt

# fscrypt OP PATH [KEYID]: add (prints the key's identifier), remove, set (a v2 policy)
fscrypt() {
    python3 - "$@" <<'PY'
import fcntl, os, struct, sys
def ioc(d, nr, size): return (d << 30) | (size << 16) | (ord('f') << 8) | nr
op, path = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDONLY)
if op == 'add':      # FS_IOC_ADD_ENCRYPTION_KEY, a key of 64 bytes by identifier
    arg = bytearray(struct.pack('II32sII32x', 2, 0, b'', 64, 0) + bytes(range(64)))
    fcntl.ioctl(fd, ioc(3, 23, 80), arg)
    print(bytes(arg[8:24]).hex())
elif op == 'remove': # FS_IOC_REMOVE_ENCRYPTION_KEY
    fcntl.ioctl(fd, ioc(3, 24, 64),
                bytearray(struct.pack('II16s16sI20x', 2, 0, bytes.fromhex(sys.argv[3]), b'', 0)))
elif op == 'set':    # FS_IOC_SET_ENCRYPTION_POLICY, v2: AES-256-XTS, AES-256-CTS
    fcntl.ioctl(fd, ioc(2, 19, 12),
                bytearray(struct.pack('BBBBB3x16s', 2, 1, 4, 0, 0, bytes.fromhex(sys.argv[3]))))
PY
}

KEY=$(fscrypt add "$BACK" 2>"$WORK/key.err") || skip_all "ext4 encryption refused a key here: $(cat "$WORK/key.err")"
mkdir "$BACK/secret"
fscrypt set "$BACK/secret" "$KEY" 2>"$WORK/policy.err" || skip_all "ext4 encryption refused a policy: $(cat "$WORK/policy.err")"
seq 1 20000 >"$WORK/text"
echo note >"$BACK/secret/note"
mkdir "$BACK/plain"

# kept_check LABEL yes|no: whether the daemon keeps names (an inotify descriptor, and one of
# the directory "plain" after a missing name was looked up there)
kept_check() {
    stat "$MNT/plain/missing" 2>/dev/null
    local fds; fds=$(ls -l "/proc/$B2FS_PID/fd" 2>/dev/null)
    if [ "$2" = yes ]; then
        check "$1: the daemon holds an inotify descriptor" grep -q "anon_inode:inotify" <<<"$fds"
        check "$1: ... and one of the directory where a missing name was looked up" \
            grep -q -- "-> $BACK/plain\$" <<<"$fds"
    else
        check "$1: the daemon holds no inotify descriptor" not grep -q "anon_inode:inotify" <<<"$fds"
    fi
}

encrypted_check() {  # LABEL yes|no [b2fs args...]
    local label=$1 kept=$2; shift 2
    mount_b2fs "$@" || fail "$label: a mount"
    check "$label: a frame written into the encrypted directory" cp "$WORK/text" "$MNT/secret/frame"
    check "$label: ... reads back" cmp "$WORK/text" "$MNT/secret/frame"
    unmount_b2fs
    check "$label: the key removed" fscrypt remove "$BACK" "$KEY"
    check "$label: ... the names in BACKING are encoded" [ ! -e "$BACK/secret/note" ]
    mount_b2fs "$@" || fail "$label: a mount"
    check "$label: without the key the directory lists two names" [ "$(ls "$MNT/secret" | wc -l)" = 2 ]
    check "$label: ... and its files are not found by their names" \
        sh -c "! stat '$MNT/secret/note' 2>/dev/null && ! stat '$MNT/secret/frame' 2>/dev/null"
    kept_check "$label" "$kept"
    check "$label: the key added again" [ "$(fscrypt add "$BACK")" = "$KEY" ]
    sleep 0.3   # the kernel keeps a missing name 0.2 s
    check "$label: ... the file is found through the same mount" [ "$(cat "$MNT/secret/note" 2>&1)" = note ]
    check "$label: ... the frame reads" cmp "$WORK/text" "$MNT/secret/frame"
    check "$label: ... the directory lists them" [ "$(ls "$MNT/secret" | tr '\n' ' ')" = "frame note " ]
    check "$label: ... a file made there reads" sh -c "echo new >'$MNT/secret/new' && [ \"\$(cat '$MNT/secret/new')\" = new ]"
    rm -f "$MNT/secret/frame" "$MNT/secret/new"
    check "$label: unmount" unmount_b2fs
}

encrypted_check "names kept" yes
encrypted_check "name_cache=off" no -o name_cache=off

# BACKING on XFS
XIMG="$WORK/xfs.img"
truncate -s 320M "$XIMG"
if ! command -v mkfs.xfs >/dev/null; then
    echo "########## NOT RUN: the XFS part (mkfs.xfs is not installed: xfsprogs) ##########"
elif ! mkfs.xfs -q -f "$XIMG" 2>"$WORK/mkfs.err" || ! mkdir -p "$WORK/xfs" ||
     ! mount -o loop "$XIMG" "$WORK/xfs" 2>"$WORK/mount.err"; then
    echo "########## NOT RUN: the XFS part (cannot make or mount XFS here: $(cat "$WORK/mkfs.err" "$WORK/mount.err" 2>/dev/null)) ##########"
else
    umount "$BACK"
    BACK="$WORK/xfs"
    mkdir "$BACK/plain"
    mount_b2fs || fail "XFS: a mount"
    if grep -q HAVE_XFS_XFS_H "$top_builddir/Makefile"; then
        kept_check "XFS (built with xfslibs-dev)" yes
    else
        kept_check "XFS (built without xfslibs-dev)" no
    fi
    check "XFS: a missing name" not stat "$MNT/plain/made" 2>/dev/null
    echo made >"$BACK/plain/made"
    sleep 0.3
    check "XFS: ... made in BACKING, shows" [ "$(cat "$MNT/plain/made" 2>&1)" = made ]
    check "XFS: unmount" unmount_b2fs
fi
finish
