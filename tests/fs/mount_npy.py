#!/usr/bin/python3
"""Array frames through a b2fs mount as .npy files (run by mount_npy.sh, which mounts).

usage: mount_npy.py CHECK MOUNT BACKING DATA

Each CHECK prints nothing and exits 0 when it holds, or exits with the reason.
"""
import hashlib
import math
import os
import subprocess
import sys

import numpy as np

check, mnt, back, data = sys.argv[1:5]


def fail(msg):
    sys.exit(msg)


def sources():
    """name -> (c-order bytes, sha256) of the arrays in tests/data/b2nd."""
    out = {}
    with open(os.path.join(data, "SOURCES.tsv")) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            row = dict(zip(head, line.rstrip("\n").split("\t")))
            out[row["file"][:-len(".b2nd")]] = (int(row["c_order_bytes"]), row["c_order_sha256"])
    return out


def npy_data(path):
    """The data bytes of a .npy file (after its header), read with plain file reads."""
    with open(path, "rb") as f:
        np.lib.format.read_magic(f)
        f.seek(0)
        version = np.lib.format.read_magic(f)
        np.lib.format._read_array_header(f, version)
        return f.read()


def geometry(path):
    get = lambda k: os.getxattr(path, "user.blosc2.b2nd." + k).decode()
    dims = lambda t: [int(x) for x in t.split(",")] if t else []
    return dims(get("shape")), dims(get("chunkshape")), dims(get("blockshape"))


def blocks_of(path, header, itemsize, start, end):
    """The (chunk, block) pairs that hold the items of bytes [start, end) of the view,
    computed from the shapes alone (an implementation apart from b2fs's)."""
    shape, chunk, block = geometry(path)
    nchunks = [math.ceil(s / c) for s, c in zip(shape, chunk)]
    nblocks = [math.ceil(c / b) for c, b in zip(chunk, block)]
    first = max(start - header, 0) // itemsize
    last = (end - header - 1) // itemsize
    out = set()
    for item in range(first, last + 1):
        x = np.unravel_index(item, shape)
        cidx = np.ravel_multi_index([xi // c for xi, c in zip(x, chunk)], nchunks)
        bidx = np.ravel_multi_index([(xi % c) // b for xi, c, b in zip(x, chunk, block)], nblocks)
        out.add((int(cidx), int(bidx)))
    return out


def decoded(path):
    text = os.getxattr(path, "user.blosc2.decoded").decode()
    return dict((k, int(v)) for k, v in (kv.split("=") for kv in text.split()))


def same_as_np_save(a, path):
    """Whether the file at path is the bytes np.save writes for a."""
    ref = os.path.join(os.environ["WORK"], "ref.npy")
    np.save(ref, a)
    with open(ref, "rb") as r, open(path, "rb") as v:
        return r.read() == v.read()


def direct_read(path, length, off):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        return os.pread(fd, length, off)
    finally:
        os.close(fd)


if check == "sources":
    # every array of the test data: np.load, np.load(mmap_mode), np.memmap and plain reads
    # all see the C-order bytes C-Blosc2's b2nd_to_cbuffer gives
    for name, (nbytes, sha) in sources().items():
        p = os.path.join(mnt, name + ".npy")
        raw = npy_data(p)
        if len(raw) != nbytes or hashlib.sha256(raw).hexdigest() != sha:
            fail("%s: data bytes differ from C-Blosc2's C order (%d bytes)" % (name, len(raw)))
        a = np.load(p)
        if np.ascontiguousarray(a).tobytes() != raw:
            fail("%s: np.load differs from the bytes" % name)
        m = np.load(p, mmap_mode="r")
        if m.tobytes() != raw or m.shape != a.shape or m.dtype != a.dtype:
            fail("%s: np.load(mmap_mode='r') differs" % name)
        if a.size:
            off = os.path.getsize(p) - len(raw)
            mm = np.memmap(p, dtype=a.dtype, mode="r", offset=off, shape=a.shape)
            if mm.tobytes() != raw:
                fail("%s: np.memmap differs" % name)
            del mm
        del m
elif check == "numpy-header":
    # the file is byte for byte what np.save writes for the array (simple dtypes; a
    # structured dtype keeps the text its metalayer has)
    for name in sources():
        p = os.path.join(mnt, name + ".npy")
        a = np.load(p)
        if not a.dtype.names and not same_as_np_save(a, p):
            fail("%s: differs from np.save's file" % name)
elif check == "lazy":
    # a row and a column of a 2-D array decode only the blocks that hold their items
    name = sys.argv[5]
    p = os.path.join(mnt, name + ".npy")
    # (from the attributes: reading the header through the page cache would read ahead)
    shape = geometry(p)[0]
    itemsize = np.dtype(os.getxattr(p, "user.blosc2.b2nd.dtype").decode()).itemsize
    header = os.path.getsize(p) - math.prod(shape) * itemsize
    seen = set()
    rowbytes = shape[1] * itemsize
    for row in (0, shape[0] // 2 + 1, shape[0] - 1):
        before = decoded(p)["blocks"]
        start = header + row * rowbytes
        got = direct_read(p, rowbytes, start)
        want = blocks_of(p, header, itemsize, start, start + rowbytes) - seen
        seen |= want
        n = decoded(p)["blocks"] - before
        if len(got) != rowbytes or n != len(want):
            fail("row %d: %d blocks decoded, %d hold its items" % (row, n, len(want)))
    col = shape[1] - 3
    before = decoded(p)["blocks"]
    want = set()
    for row in range(shape[0]):
        start = header + row * rowbytes + col * itemsize
        direct_read(p, itemsize, start)
        want |= blocks_of(p, header, itemsize, start, start + itemsize)
    want -= seen
    n = decoded(p)["blocks"] - before
    if n != len(want):
        fail("column %d: %d blocks decoded, %d hold its items" % (col, n, len(want)))
    if decoded(p)["chunks"]:
        fail("whole chunks decoded")
elif check == "save":
    # np.save and cp store arrays (C-Blosc2 reads them: b2frame info shows the b2nd
    # metalayer); they read back the same
    rng = np.random.default_rng(5)
    arrays = {
        "f8": rng.standard_normal((300, 200)),
        "i2": rng.integers(-999, 999, (7, 11, 13), dtype="<i2"),
        "be": np.arange(1000, dtype=">u4"),
        "scalar": np.array(3.5),
        "empty": np.zeros((0, 4), "<f4"),
        "bool": rng.integers(0, 2, (33, 17)).astype(bool),
        "c8": (rng.standard_normal(500) + 1j).astype("<c8"),
        "rec": np.array([(1, 2.5, b"ab"), (3, 4.5, b"cd")] * 50,
                        dtype=[("a", "<i4"), ("b", "<f8"), ("c", "S3")]),
        "u": np.array(["alpha", "beta", "gamma"] * 7),
        "dt": np.arange("2020-01-01", "2020-03-01", dtype="datetime64[D]"),
    }
    for k, a in arrays.items():
        p = os.path.join(mnt, k + ".npy")
        np.save(p, a)
        b = np.load(p)
        if b.dtype != a.dtype or b.shape != a.shape or b.tobytes() != a.tobytes():
            fail("%s: np.load after np.save differs" % k)
        if not os.path.exists(os.path.join(back, k + ".b2nd")):
            fail("%s: not stored as %s.b2nd" % (k, k))
        if os.getxattr(p, "user.blosc2.b2nd.shape").decode() != ",".join(map(str, a.shape)):
            fail("%s: b2nd.shape %r" % (k, os.getxattr(p, "user.blosc2.b2nd.shape")))
        if not same_as_np_save(a, p):
            fail("%s: the view differs from np.save's bytes" % k)
elif check == "not-arrays":
    # what b2fs does not store as an array stays an ordinary frame with the same bytes
    work = os.environ["WORK"]
    f = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    np.save(os.path.join(work, "fortran.npy"), f)
    np.save(os.path.join(work, "objects.npy"), np.array([1, "a", None], dtype=object),
            allow_pickle=True)
    with open(os.path.join(work, "garbage.npy"), "wb") as g:
        g.write(b"\x93NUMPY\x01\x00\x10\x00{'descr': '<i4',\n" + bytes(range(200)))
    with open(os.path.join(work, "short.npy"), "wb") as g:
        np.save(g, np.arange(100, dtype="<i4"))
    with open(os.path.join(work, "short.npy"), "r+b") as g:
        g.truncate(200)
    for k in ("fortran", "objects", "garbage", "short"):
        src = os.path.join(work, k + ".npy")
        subprocess.run(["cp", src, mnt + "/"], check=True)
        with open(src, "rb") as s, open(os.path.join(mnt, k + ".npy"), "rb") as v:
            if s.read() != v.read():
                fail("%s: bytes differ" % k)
        try:
            os.getxattr(os.path.join(mnt, k + ".npy"), "user.blosc2.b2nd.shape")
            fail("%s: stored as an array" % k)
        except OSError:
            pass
        # not under STEM.b2nd, which says "array" to C-Blosc2, but as an ordinary frame
        if os.path.exists(os.path.join(back, k + ".b2nd")) or \
                not os.path.exists(os.path.join(back, k + ".npy.b2frame")):
            fail("%s: not stored as %s.npy.b2frame: %s" % (k, k, sorted(os.listdir(back))))
    if not np.array_equal(np.load(os.path.join(mnt, "fortran.npy")), f):
        fail("fortran: np.load differs")
else:
    fail("unknown check " + check)
