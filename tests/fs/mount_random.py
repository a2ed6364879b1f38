#!/usr/bin/python3
"""Random writes, appends, truncates, renames and reads on files in a b2fs mount,
mirrored on plain files in a reference directory; every read and a full comparison
at the end must agree. Usage: mount_random.py MNT REFDIR SEED NOPS"""
import os
import random
import sys

mnt, ref, seed, nops = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
NAMES = ["a", "b", "c", "d.dat", "e"]
CHUNK = 65536


def data(n):
    kind = rng.randrange(4)
    if kind == 0:
        return bytes(n)
    if kind == 1:
        return rng.randbytes(n)
    if kind == 2:
        return bytes([rng.randrange(256)]) * n
    return ((b"%d," % rng.randrange(10**6)) * (n // 2 + 1))[:n]


def present():
    return [n for n in NAMES if os.path.exists(os.path.join(ref, n))]


def both(name):
    return os.path.join(mnt, name), os.path.join(ref, name)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def compare(name, what):
    m, r = both(name)
    if not os.path.exists(m):
        fail("%s: %s missing in the mount" % (what, name))
    a = open(m, "rb").read()
    b = open(r, "rb").read()
    if a != b:
        i = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        fail("%s: %s differs (mount %d bytes, reference %d, first difference at %d)" % (what, name, len(a), len(b), i))


for name in present():
    compare(name, "at start")

counts = {}
for op_no in range(nops):
    names = present()
    op = rng.choice(["write", "write", "write", "append", "truncate", "read", "read", "rename", "create", "unlink", "fsync"])
    if op in ("write", "append", "truncate", "read", "rename", "unlink", "fsync") and not names:
        op = "create"
    counts[op] = counts.get(op, 0) + 1
    if op == "create":
        name = rng.choice(NAMES)
        buf = data(rng.randrange(0, 3 * CHUNK))
        for p in both(name):
            with open(p, "wb") as f:
                f.write(buf)
    elif op in ("write", "append"):
        name = rng.choice(names)
        m, r = both(name)
        size = os.path.getsize(r)
        n = rng.choice([1, 100, 4096, CHUNK, rng.randrange(1, 4 * CHUNK)])
        off = size if op == "append" else rng.randrange(0, size + 2 * CHUNK)
        buf = data(n)
        for p in (m, r):
            fd = os.open(p, os.O_WRONLY | (os.O_APPEND if op == "append" else 0))
            if op == "append":
                os.write(fd, buf)
            else:
                os.pwrite(fd, buf, off)
            os.close(fd)
    elif op == "truncate":
        name = rng.choice(names)
        m, r = both(name)
        size = os.path.getsize(r)
        new = rng.choice([0, size // 2, size + 1, size + 5 * CHUNK + 3, rng.randrange(0, size + 1)])
        for p in (m, r):
            os.truncate(p, new)
    elif op == "read":
        name = rng.choice(names)
        m, r = both(name)
        size = os.path.getsize(r)
        off = rng.randrange(0, size + 10)
        n = rng.randrange(1, 3 * CHUNK)
        fm, fr = os.open(m, os.O_RDONLY), os.open(r, os.O_RDONLY)
        a, b = os.pread(fm, n, off), os.pread(fr, n, off)
        os.close(fm)
        os.close(fr)
        if a != b:
            fail("op %d: read of %s at %d+%d differs" % (op_no, name, off, n))
        if os.path.getsize(m) != size:
            fail("op %d: size of %s is %d, expected %d" % (op_no, name, os.path.getsize(m), size))
    elif op == "rename":
        src = rng.choice(names)
        dst = rng.choice(NAMES)
        for base in (mnt, ref):
            os.rename(os.path.join(base, src), os.path.join(base, dst))
    elif op == "unlink":
        name = rng.choice(names)
        for p in both(name):
            os.unlink(p)
    elif op == "fsync":
        name = rng.choice(names)
        m, _ = both(name)
        fd = os.open(m, os.O_RDWR)
        os.fsync(fd)
        os.close(fd)
    if op_no % 200 == 0:
        for name in present():
            compare(name, "after op %d" % op_no)

if sorted(os.listdir(mnt)) != sorted(present()):
    fail("directory listing %s, expected %s" % (sorted(os.listdir(mnt)), sorted(present())))
for name in present():
    compare(name, "at end")
print("ok: %d operations (%s)" % (nops, ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
