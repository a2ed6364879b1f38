#!/bin/bash
# Installs the built Debian package on this machine and uses it as a user would:
#   tests/package/install_deb.sh path/to/b2fs_VERSION_ARCH.deb
# apt-get install ./b2fs_*.deb (fuse3 and the libraries come by their Debian names), the
# programs, manual pages and completion where the package puts them, a mount through
# `mount -t fuse.b2fs` and one through an /etc/fstab line with options (files written and
# read back, the frames checked with the installed b2frame), then apt-get purge, after
# which nothing of the package is left. Needs root and /dev/fuse; changes the system
# (the package, /etc/fstab while it runs), so `make check` does not run it;
# contrib/run-tests does, after building the package.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$top_srcdir/tests/lib/lib.sh"

deb=${1:-}
[ -f "$deb" ] || { echo "usage: $0 b2fs_VERSION_ARCH.deb"; fail "no package given"; finish; exit 1; }
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
# A missing FUSE or root is a failure here, not a skip: this test exists to show the
# package works, and run-tests only calls it where it must.
[ "$(id -u)" -eq 0 ] || { fail "needs root (apt-get, mount, /etc/fstab)"; finish; exit 1; }
[ -c /dev/fuse ] || { fail "no /dev/fuse: cannot mount"; finish; exit 1; }
if dpkg-query -W -f='${Status}' b2fs 2>/dev/null | grep -q 'install ok installed'; then
    fail "a b2fs package is installed already; remove it first"
    finish; exit 1
fi

# The standard PATH, as mount(8) gives its helpers: a b2fs under /usr/local is not used.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
work=$(mktemp -d /tmp/b2fs-deb.XXXXXX)
fstab_saved="$work/fstab.orig"
cp -p /etc/fstab "$fstab_saved" 2>/dev/null || : >"$fstab_saved"
cleanup() {
    for m in "$work/mnt1" "$work/mnt2"; do
        mountpoint -q "$m" 2>/dev/null && { umount "$m" 2>/dev/null || umount -l "$m"; }
    done
    cp -p "$fstab_saved" /etc/fstab
    if dpkg-query -W -f='${Status}' b2fs 2>/dev/null | grep -q 'installed'; then
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq b2fs >/dev/null 2>&1
    fi
    rm -rf "$work"
}
trap cleanup EXIT

echo "== apt-get install $(basename "$deb")"
if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >"$work/apt.log" 2>&1; then
    ok "apt-get install ./$(basename "$deb")"
else
    tail -n 20 "$work/apt.log"
    fail "apt-get install ./$(basename "$deb")"
    finish; exit 1
fi
version=$(dpkg-query -W -f='${Version}' b2fs)
check "dpkg lists b2fs $version as installed" \
    sh -c "dpkg-query -W -f='\${Status}' b2fs | grep -q 'install ok installed'"
check "the package depends on fuse3" sh -c "dpkg-query -W -f='\${Depends}' b2fs | grep -q fuse3"
for p in /usr/bin/b2fs /usr/bin/b2frame; do
    check "$p is the package's ($(dpkg -S "$p" 2>/dev/null | cut -d: -f1))" \
        sh -c "dpkg -S $p | grep -q '^b2fs:'"
done
check "b2fs --version prints $version" sh -c "b2fs --version | head -n 1 | grep -qF '$version'"
check "b2frame --version prints $version" sh -c "b2frame --version | head -n 1 | grep -qF '$version'"
check "b2fs --version names the libraries it runs with" \
    sh -c "b2fs --version | grep -q libfuse && b2fs --version | grep -q zstd"
for page in b2fs b2frame; do
    check "man page $page.1 installed" test -f "/usr/share/man/man1/$page.1.gz"
    check "bash completion for $page installed" \
        test -f "/usr/share/bash-completion/completions/$page"
done
check "the example mount unit is in the docs" test -f /usr/share/doc/b2fs/examples/b2fs.mount
check "the copyright file is in the docs" test -f /usr/share/doc/b2fs/copyright

# The daemon serving mountpoint $1 must be the installed /usr/bin/b2fs.
daemon_is_installed() {
    local pid
    for pid in $(pgrep -x b2fs); do
        if tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF " $1"; then
            [ "$(readlink "/proc/$pid/exe")" = /usr/bin/b2fs ] && return 0
        fi
    done
    return 1
}

# Writes, reads back and checks one file through mount point $1 (backing $2); $3: the
# codec the mount options asked for.
use_mount() {
    local mnt=$1 back=$2 codec=$3 label=$4
    seq 1 200000 >"$work/in.txt"
    head -c 3000000 /dev/urandom >"$work/in.bin"
    check "$label: cp of a text file in" cp "$work/in.txt" "$mnt/numbers.txt"
    check "$label: cp of a binary file in" cp "$work/in.bin" "$mnt/random.bin"
    check "$label: the text file reads back the same" cmp "$work/in.txt" "$mnt/numbers.txt"
    check "$label: the binary file reads back the same" cmp "$work/in.bin" "$mnt/random.bin"
    check "$label: an append reads back" sh -c \
        "printf tail >>'$mnt/numbers.txt' && tail -c 4 '$mnt/numbers.txt' | grep -qx tail"
    # (new files are written plain and made frames once idle; a read of an attribute of
    # the frame makes it at once)
    local got
    got=$(getfattr --only-values -n user.blosc2.codec "$mnt/numbers.txt" 2>/dev/null)
    if [ "$got" = "$codec" ]; then ok "$label: the option codec=$codec applies"
    else fail "$label: codec of a new file is '$got', the option said $codec"; fi
    getfattr -n user.blosc2.nbytes "$mnt/random.bin" >/dev/null 2>&1
    check "$label: stored as frames in the backing directory" \
        test -f "$back/numbers.txt.b2frame" -a -f "$back/random.bin.b2frame"
}

echo "== mount -t fuse.b2fs"
mkdir -p "$work/back1" "$work/mnt1" "$work/back2" "$work/mnt2"
if mount -t fuse.b2fs -o codec=lz4,clevel=5 "$work/back1" "$work/mnt1" 2>"$work/mount1.err" &&
   mountpoint -q "$work/mnt1"; then
    ok "mount -t fuse.b2fs -o codec=lz4,clevel=5 BACKING MNT"
    check "the daemon is the installed /usr/bin/b2fs" daemon_is_installed "$work/mnt1"
    use_mount "$work/mnt1" "$work/back1" lz4 "mount -t"
    check "umount of the mount -t mount" umount "$work/mnt1"
else
    cat "$work/mount1.err"
    fail "mount -t fuse.b2fs -o codec=lz4,clevel=5 BACKING MNT"
fi
check "installed b2frame verifies what the mount wrote" \
    b2frame verify -q "$work/back1/numbers.txt.b2frame" "$work/back1/random.bin.b2frame"

echo "== /etc/fstab"
printf '%s %s fuse.b2fs noauto,codec=zlib,clevel=3,chunksize=256K 0 0\n' \
    "$work/back2" "$work/mnt2" >>/etc/fstab
if mount "$work/mnt2" 2>"$work/mount2.err" && mountpoint -q "$work/mnt2"; then
    ok "mount MNT from an /etc/fstab line with options"
    check "the fstab mount's daemon is the installed /usr/bin/b2fs" daemon_is_installed "$work/mnt2"
    check "findmnt shows the fstab mount as fuse.b2fs" \
        sh -c "findmnt -n -o FSTYPE '$work/mnt2' | grep -qx fuse.b2fs"
    use_mount "$work/mnt2" "$work/back2" zlib "fstab"
    got=$(getfattr --only-values -n user.blosc2.chunksize "$work/mnt2/random.bin" 2>/dev/null)
    if [ "$got" = 262144 ]; then ok "fstab: the option chunksize=256K applies"
    else fail "fstab: chunksize of a new file is '$got', the fstab line said 256K"; fi
    check "umount of the fstab mount" umount "$work/mnt2"
else
    cat "$work/mount2.err"
    fail "mount MNT from an /etc/fstab line with options"
fi
cp -p "$fstab_saved" /etc/fstab
check "/etc/fstab is as it was" cmp -s "$fstab_saved" /etc/fstab
check "installed b2frame verifies what the fstab mount wrote" \
    b2frame verify -q "$work/back2/numbers.txt.b2frame" "$work/back2/random.bin.b2frame"

echo "== apt-get purge b2fs"
check "apt-get purge b2fs" sh -c "DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq b2fs >'$work/purge.log' 2>&1"
check "dpkg no longer lists b2fs" sh -c "! dpkg-query -W -f='\${Status}' b2fs 2>/dev/null | grep -q installed"
for f in /usr/bin/b2fs /usr/bin/b2frame /usr/share/man/man1/b2fs.1.gz \
         /usr/share/bash-completion/completions/b2frame /usr/share/doc/b2fs; do
    check "$f is gone" test ! -e "$f"
done
check "the frames written through the package are still there" \
    test -s "$work/back2/random.bin.b2frame"
finish
