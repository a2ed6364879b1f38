#!/bin/bash
# Security: with -o allow_other,default_permissions another user (nobody, through
# setpriv) can do only what file modes allow; symlinks in BACKING show as links (their
# text, not followed, never decoded as frames) and links made through the mount are
# stored verbatim; frames that declare absurd sizes (2^60 bytes, 2^40 chunks) are
# refused with EIO and a log line, without the daemon growing, and the mount goes on.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
. "$top_srcdir/tests/lib/rel_lib.sh"
need_fuse
[ "$(id -u)" -eq 0 ] || skip_all "needs root (to run commands as another user with setpriv)"
command -v setpriv >/dev/null || skip_all "setpriv is not installed"
chmod 755 "$WORK"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@" >/dev/null 2>&1; }
refuse() { local d="$1"; shift; if as_nobody "$@"; then fail "nobody can: $d"; else ok "nobody cannot: $d"; fi; }
allow() { local d="$1"; shift; if as_nobody "$@"; then ok "nobody can: $d"; else fail "nobody cannot: $d"; fi; }

# symlinks and a frame outside BACKING, made before the mount
cp "$DATA/random-zstd5-shuffle-t1-c65536.b2frame" "$WORK/outside.b2frame"
ln -s /etc/passwd "$BACK/abs_link"
ln -s ../outside.b2frame "$BACK/rel_link"
ln -s "$WORK/outside.b2frame" "$BACK/frame_link.b2frame"
ln -s "$WORK" "$BACK/dir_link"
# frames that declare absurd sizes: a fixture copy with header fields patched
# (nbytes at byte 30, 8 bytes big endian; chunksize at byte 58, 4 bytes)
src="$DATA/random-zstd5-shuffle-t1-c65536.b2frame"
patch_frame() {  # OUT NBYTES [CHUNKSIZE]
    cp "$src" "$1"
    /usr/bin/python3 - "$@" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(30); f.write(struct.pack(">q", int(sys.argv[2])))
    if len(sys.argv) > 3:
        f.seek(58); f.write(struct.pack(">i", int(sys.argv[3])))
PY
}
patch_frame "$BACK/huge_bytes.b2frame" $((1 << 60))
patch_frame "$BACK/huge_chunks.b2frame" $((1 << 56))       # 2^40 chunks of 64 KiB
patch_frame "$BACK/huge_tiny.b2frame" $((1 << 40)) 1       # 2^40 chunks of 1 byte
cp "$src" "$BACK/good.b2frame"

rel_mount -o allow_other,default_permissions || { fail "mount"; finish; exit 1; }
pid=$(cat "$(rel_pidfile)")

# --- permissions
echo secret >"$MNT/secret" && chmod 600 "$MNT/secret"
echo public >"$MNT/public" && chmod 644 "$MNT/public"
echo shared >"$MNT/shared" && chmod 666 "$MNT/shared"
mkdir -m 700 "$MNT/private" && echo inside >"$MNT/private/f" && chmod 644 "$MNT/private/f"
mkdir -m 777 "$MNT/open"
allow "read a 0644 file" cat "$MNT/public"
refuse "read a 0600 file of root" cat "$MNT/secret"
refuse "write a 0644 file of root" sh -c "echo x >>'$MNT/public'"
refuse "truncate a 0644 file of root" truncate -s 0 "$MNT/public"
allow "write a 0666 file" sh -c "echo more >>'$MNT/shared'"
refuse "list a 0700 directory of root" ls "$MNT/private"
refuse "read a 0644 file in a 0700 directory" cat "$MNT/private/f"
refuse "create a file in a 0755 directory of root" touch "$MNT/new"
refuse "make a directory in a 0755 directory of root" mkdir "$MNT/newdir"
refuse "remove a file of root from a 0755 directory" rm -f "$MNT/public"
refuse "rename a file of root" mv "$MNT/public" "$MNT/open/p"
refuse "chmod a file of root" chmod 666 "$MNT/public"
refuse "set a user.* attribute on a 0644 file of root" setfattr -n user.x -v 1 "$MNT/public"
refuse "set user.blosc2.codec on a 0644 file of root" setfattr -n user.blosc2.codec -v lz4 "$MNT/public"
allow "create a file in a 0777 directory" sh -c "echo mine >'$MNT/open/mine'"
check "  ... it belongs to nobody" [ "$(stat -c %u "$MNT/open/mine")" = 65534 ]
check "  ... and so does its backing file (a plain file: 5 bytes do not compress)" \
    [ "$(stat -c %u "$BACK/open/mine")" = 65534 ]
chmod 600 "$MNT/open/mine"
allow "  ... and reads it after root made it 0600" cat "$MNT/open/mine"
check "secret and public unchanged" [ "$(cat "$MNT/secret" "$MNT/public")" = "$(printf 'secret\npublic')" ]
chmod 600 "$MNT/public"
refuse "read a file root just made 0600" cat "$MNT/public"

# --- a write by a user without CAP_FSETID drops set-user-ID, and set-group-ID where group
# execute is set, as on any Linux file system. The kernel does it for files written
# through the page cache; a new file opened write-only is written past it (direct_io),
# and b2fs does it. Root's writes keep the bits.
cat >"$WORK/write.py" <<'PY'
import os, sys
path, mode, flags = sys.argv[1], int(sys.argv[2], 8), os.O_WRONLY
if mode:   # a new file: its mode set through the descriptor, past the umask
    flags |= os.O_CREAT | os.O_EXCL
fd = os.open(path, flags, 0o600)
if mode:
    os.fchmod(fd, mode)
os.write(fd, b"#!/bin/sh\n" * 300)
os.close(fd)
PY
chmod 644 "$WORK/write.py"
mode_of() { stat -c %a "$1"; }
backing_of() { [ -e "$1.b2frame" ] && echo "$1.b2frame" || echo "$1"; }   # (plain: new_plain)
allow "create and write a file of mode 6755 in a 0777 directory" \
    /usr/bin/python3 "$WORK/write.py" "$MNT/open/s1" 6755
check "  ... it is 0755 after the write" [ "$(mode_of "$MNT/open/s1")" = 755 ]
check "  ... and so is its backing file" [ "$(mode_of "$(backing_of "$BACK/open/s1")")" = 755 ]
allow "create and write a file of mode 2744 (set-group-ID, no group execute)" \
    /usr/bin/python3 "$WORK/write.py" "$MNT/open/s2" 2744
check "  ... it keeps 2744" [ "$(mode_of "$MNT/open/s2")" = 2744 ]
check "root's new file of mode 6755 keeps it after root's write" sh -c \
    "/usr/bin/python3 '$WORK/write.py' '$MNT/open/s3' 6755 && [ \$(stat -c %a '$MNT/open/s3') = 6755 ]"
echo x >"$MNT/open/s4" && chmod 6777 "$MNT/open/s4"
allow "write root's file of mode 6777 (not created by the writer)" \
    /usr/bin/python3 "$WORK/write.py" "$MNT/open/s4" 0
check "  ... it is 0777 after the write" [ "$(mode_of "$MNT/open/s4")" = 777 ]

# --- nothing outside BACKING through the mount
for l in abs_link rel_link dir_link; do
    check "$l shows as a symbolic link" [ "$(stat -c %F "$MNT/$l")" = "symbolic link" ]
    check "$l keeps its text" [ "$(readlink "$MNT/$l")" = "$(readlink "$BACK/$l")" ]
done
fl=$(cd "$MNT" && ls -d frame_link* 2>/dev/null)
check "a link named like a frame shows as a link ($fl), not decoded" \
    [ -n "$fl" ] && [ "$(stat -c %F "$MNT/$fl")" = "symbolic link" ]
check "  ... and has no frame attributes" not getfattr -h -n user.blosc2.nbytes "$MNT/$fl"
check "no path through .. leaves the mount's names" [ "$(cat "$MNT/open/../secret")" = secret ]
ln -s /etc/shadow "$MNT/made_abs" && ln -s ../../outside "$MNT/made_rel"
check "a link made through the mount is stored verbatim (absolute)" \
    [ "$(readlink "$BACK/made_abs")" = /etc/shadow ]
check "a link made through the mount is stored verbatim (relative)" \
    [ "$(readlink "$BACK/made_rel")" = ../../outside ]
check "the frame outside BACKING is untouched" cmp "$src" "$WORK/outside.b2frame"

# --- absurd sizes
for f in huge_bytes huge_chunks huge_tiny; do
    out=$(head -c 100 "$MNT/$f" 2>&1 >/dev/null)
    check "$f: read refused with EIO ($out)" grep -q "Input/output error" <<<"$out"
    check "$f: the log names the file and the reason" grep -q "$f.b2frame.*accept" "$WORK/b2fs.log"
done
check "the mount goes on: the good frame reads" cmp "$MNT/good" <("$B2FRAME" cat "$BACK/good.b2frame")
check "the mount goes on: a new file writes" sh -c "seq 1 1000 >'$MNT/after' && seq 1 1000 | cmp - '$MNT/after'"
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
peak=$(awk '/VmPeak/ {print $2}' "/proc/$pid/status")
check "the daemon's resident peak stays small ($hwm KiB < 128 MiB)" [ "$hwm" -lt 131072 ]
check "the daemon's address space peak stays small ($peak KiB < 2 GiB)" [ "$peak" -lt 2097152 ]
check "unmount" rel_unmount
finish
