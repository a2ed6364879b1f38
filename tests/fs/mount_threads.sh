#!/bin/bash
# Concurrent calls on one mount: writers overwriting their own blocks of shared files in
# rounds with fsync (commits, and compaction once the files are mostly dead space),
# readers checking every block they read, chmod, chown and xattr calls on the same files. Every
# read must give bytes some writer wrote there, each file ends as its last round, and the
# daemon logs no error. Built with --enable-tsan (contrib/run-tests' ThreadSanitizer
# stage) the daemon's log must hold no ThreadSanitizer report either.
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/mount_lib.sh"
# new files made frames at their create (not written plain first, new_plain): this suite
# looks at frames as they are written
B2FS_SUITE_OPTS=new_plain=off
need_fuse

mount_b2fs -o chunksize=64K,dirty_size=1M,cache_size=2M || { fail "mount"; finish; exit 1; }

check "concurrent writers, readers, chmod, chown and xattrs" /usr/bin/python3 - "$MNT" "$WORK" <<'PY'
import os, random, struct, sys, threading
import numpy
mnt = sys.argv[1]
BLOCK, NBLOCKS, ROUNDS, FILES = 4096, 256, 6, ("f0", "f1")
errors = []

# block b by writer w in round r: a tag, then random bytes seeded by it (incompressible:
# rewrites leave the files mostly dead space, so commits compact them)
def stamp(w, r, b):
    tag = (w << 56) | (r << 48) | b
    return struct.pack("<Q", tag) + random.Random(tag).randbytes(BLOCK - 8)

# A read that overlaps a write may see some bytes of a block from before it and some from
# after it: Linux copies a page to a reader without the lock a writer holds, on any file
# system. So each byte of a block read must be that byte of one of the block's rounds (or
# zero, not written yet); a block of another place or writer does not pass.
rounds_of = {}
def block_ok(data, b):
    if b not in rounds_of:
        rounds_of[b] = numpy.array([numpy.frombuffer(stamp(b & 1, r, b), "u1") for r in range(1, ROUNDS + 1)]
                                   + [numpy.zeros(BLOCK, "u1")])
    got = numpy.frombuffer(data, "u1")
    return bool((rounds_of[b] == got).any(axis=0).all())

for f in FILES:
    with open(os.path.join(mnt, f), "wb"):
        pass

def writer(w):
    for r in range(1, ROUNDS + 1):
        for f in FILES:
            fd = os.open(os.path.join(mnt, f), os.O_WRONLY)
            for b in range(w, NBLOCKS, 2):
                os.pwrite(fd, stamp(w, r, b), b * BLOCK)
            os.fsync(fd)
            os.close(fd)

def reader(i):
    for k in range(30):
        f = FILES[(i + k) % 2]
        data = open(os.path.join(mnt, f), "rb").read()
        for b in range(len(data) // BLOCK):
            if not block_ok(data[b * BLOCK:(b + 1) * BLOCK], b):
                errors.append("%s block %d: bytes nobody wrote there" % (f, b))
                return

def attrs(i):
    for k in range(300):
        p = os.path.join(mnt, FILES[(i + k) % 2])
        os.chmod(p, 0o600 if k & 1 else 0o644)
        os.chown(p, 0, 0)
        fd = os.open(p, os.O_RDONLY)
        os.fchmod(fd, 0o644 if k & 1 else 0o600)
        os.fchown(fd, 0, 0)
        os.close(fd)
        os.setxattr(p, "user.note", str(k).encode())
        os.getxattr(p, "user.note")
        os.getxattr(p, "user.blosc2.cratio")
        os.listxattr(p)

def run(fn, i):
    try:
        fn(i)
    except Exception as e:
        errors.append("%s: %r" % (fn.__name__, e))

ts = [threading.Thread(target=run, args=a) for a in
      [(writer, 0), (writer, 1), (reader, 0), (reader, 1), (attrs, 0), (attrs, 1)]]
for t in ts: t.start()
for t in ts: t.join()
want = b"".join(stamp(b & 1, ROUNDS, b) for b in range(NBLOCKS))
for f in FILES:
    open(os.path.join(sys.argv[2], "want-" + f), "wb").write(want)
    if open(os.path.join(mnt, f), "rb").read() != want:
        errors.append("%s: not the last round" % f)
print("\n".join(errors[:10]))
sys.exit(1 if errors else 0)
PY
unmount_b2fs
compacted() { getfattr -n user.b2fs.from "$1" >/dev/null 2>&1; }
for f in f0 f1; do
    check "$f is a valid frame after the run" frame_ok "$BACK/$f.b2frame"
    check "$f was compacted during the run" compacted "$BACK/$f.b2frame"
    check "$f's committed frame holds the last round" cmp -s "$WORK/want-$f" <("$B2FRAME" cat "$BACK/$f.b2frame")
done
check "the daemon logged no error" not grep -E "b2fs: .*(failed|lost|cannot)" "$WORK/b2fs.log"
check "no ThreadSanitizer report in the daemon's log" not grep -q "ThreadSanitizer" "$WORK/b2fs.log"
finish
