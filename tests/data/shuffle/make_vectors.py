#!/usr/bin/python3
"""Known-answer vectors for tests/shuffle/test_shuffle.c, made by c-blosc 1.21 (python3-blosc).

For each case a chunk is compressed with zlib, the streams of
each block inflated, and what c-blosc's filter made of the blocks is written next
to the input: NAME-bBLOCKSIZE.in (the chunk) and NAME-bBLOCKSIZE.out (the filtered
blocks, one after the other; the last block may be shorter).
Run from this directory: /usr/bin/python3 make_vectors.py
"""
import math
import struct
import zlib

import blosc

CASES = [
    # name, filter, typesize, nbytes
    ("shuffle-t4-n4099", blosc.SHUFFLE, 4, 4099),
    ("shuffle-t3-n3001", blosc.SHUFFLE, 3, 3001),
    ("shuffle-t8-n4096", blosc.SHUFFLE, 8, 4096),
    ("bitshuffle-t4-n4099", blosc.BITSHUFFLE, 4, 4099),
    ("bitshuffle-t8-n8192", blosc.BITSHUFFLE, 8, 8192),
    ("bitshuffle-t2-n4000", blosc.BITSHUFFLE, 2, 4000),
    ("bitshuffle-t3-n3024", blosc.BITSHUFFLE, 3, 3024),
    ("bitshuffle-t1-n1000", blosc.BITSHUFFLE, 1, 1000),
    ("bitshuffle-t4-n4012", blosc.BITSHUFFLE, 4, 4012),   # 1003 items: copied whole
    ("bitshuffle-t16-n4096", blosc.BITSHUFFLE, 16, 4096),
]


def series(nbytes):
    """Compressible but not trivial: a slow sine with a little deterministic noise."""
    out = bytearray()
    x = 12345
    while len(out) < nbytes:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        v = math.sin(len(out) / 400.0) * 1000.0 + (x % 1000) / 1000.0
        out += struct.pack("<f", v)
    return bytes(out[:nbytes])


def filtered_blocks(chunk, typesize):
    flags = chunk[2]
    nbytes, blocksize, cbytes = struct.unpack_from("<iii", chunk, 4)
    assert flags & 0x02 == 0, "memcpyed chunk"
    split = not flags & 0x10
    nblocks = (nbytes + blocksize - 1) // blocksize
    out = b""
    for b in range(nblocks):
        pos, = struct.unpack_from("<i", chunk, 16 + 4 * b)
        size = min(blocksize, nbytes - b * blocksize)
        leftover = size < blocksize
        nstreams = typesize if split and not leftover else 1
        for _ in range(nstreams):
            want = size // nstreams
            csize, = struct.unpack_from("<i", chunk, pos)
            stream = chunk[pos + 4:pos + 4 + csize]
            pos += 4 + csize
            # a stream that would not shrink is stored as it is
            part = stream if csize == want else zlib.decompress(stream)
            assert len(part) == want
            out += part
    return blocksize, out


for name, filt, typesize, nbytes in CASES:
    data = series(nbytes)
    blosc.set_blocksize(nbytes)
    chunk = blosc.compress(data, typesize=typesize, clevel=1, shuffle=filt,
                           cname="zlib")
    assert blosc.decompress(chunk) == data
    blocksize, out = filtered_blocks(chunk, typesize)
    assert len(out) == nbytes
    name += "-b%d" % blocksize
    with open(name + ".in", "wb") as f:
        f.write(data)
    with open(name + ".out", "wb") as f:
        f.write(out)
    print(name)
