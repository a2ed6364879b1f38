#!/bin/bash
# The names of directories kept in memory (fs/dirnames) where a directory's listing is not
# the names a lookup finds: an encrypted directory (fscrypt, ext4) listed while its key is
# missing shows its names encoded; once the key is added its files must be found by their
# names, through the same mount. BACKING is an ext4 made with the encrypt feature in a
# loop device; the key and the policy are set with the fscrypt ioctls (v2). Run with names
# kept (the default) and with name_cache=off.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
need_fuse
command -v mkfs.ext4 >/dev/null || skip_all "mkfs.ext4 is not installed"
IMG="$WORK/ext4.img"
truncate -s 64M "$IMG"
mkfs.ext4 -q -F -O encrypt "$IMG" 2>"$WORK/mkfs.err" || skip_all "mkfs.ext4 -O encrypt: $(cat "$WORK/mkfs.err")"
mount -o loop "$IMG" "$BACK" 2>"$WORK/mount.err" || skip_all "cannot mount an ext4 image here: $(cat "$WORK/mount.err")"
trap 'cleanup_mount_loop' EXIT
cleanup_mount_loop() {
    for m in $(grep " fuse.b2fs " /proc/mounts | awk '{print $2}' | grep "^$WORK/" || true); do
        fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null
    done
    umount "$BACK" 2>/dev/null || umount -l "$BACK"
    cleanup_mount
}

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

encrypted_check() {  # LABEL [b2fs args...]
    local label=$1; shift
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
    check "$label: the key added again" [ "$(fscrypt add "$BACK")" = "$KEY" ]
    sleep 0.3   # the kernel keeps a missing name 0.2 s
    check "$label: ... the file is found through the same mount" [ "$(cat "$MNT/secret/note" 2>&1)" = note ]
    check "$label: ... the frame reads" cmp "$WORK/text" "$MNT/secret/frame"
    check "$label: ... the directory lists them" [ "$(ls "$MNT/secret" | tr '\n' ' ')" = "frame note " ]
    check "$label: ... a file made there reads" sh -c "echo new >'$MNT/secret/new' && [ \"\$(cat '$MNT/secret/new')\" = new ]"
    rm -f "$MNT/secret/frame" "$MNT/secret/new"
    check "$label: unmount" unmount_b2fs
}

encrypted_check "names kept"
encrypted_check "name_cache=off" -o name_cache=off
finish
