#!/usr/bin/python3
"""Helper for tests/codec/codec_interop.sh, run by Debian's python3 with python3-blosc.

  codec_interop.py make DIR    write NAME.in (data) and NAME.blosc (c-blosc's chunk of it)
  codec_interop.py check DIR   decompress every NAME.b2 (made by b2fs) with c-blosc and
                               compare it with NAME.in; prints one line per file
"""
import math
import os
import random
import struct
import sys

import blosc


def datasets():
    rnd = random.Random(7)
    floats = struct.pack("<20000d", *[math.sin(i / 50.0) * 100 + i * 0.001 for i in range(20000)])
    text = b" ".join(rnd.choice([b"alpha", b"beta", b"gamma", b"delta", b"epsilon\n"])
                     for _ in range(30000))
    noise = bytes(rnd.getrandbits(8) for _ in range(50000))
    ints = struct.pack("<40000i", *[i // 3 for i in range(40000)])
    return {"float": floats, "text": text, "noise": noise, "ints": ints}


SIZES = [0, 1, 7, 100, 4099, 65536, 100003]
TYPESIZES = [1, 2, 3, 4, 8, 16]
SHUFFLES = {"noshuffle": blosc.NOSHUFFLE, "shuffle": blosc.SHUFFLE,
            "bitshuffle": blosc.BITSHUFFLE}


def make(out):
    data = datasets()
    n = 0
    for cname in ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]:
        for sname, shuf in SHUFFLES.items():
            for ts in TYPESIZES:
                for size in SIZES:
                    # Not every combination: rotate data sets and clevels to stay small.
                    dname = sorted(data)[(n + ts) % len(data)]
                    buf = data[dname][:size]
                    clevel = 1 + n % 9
                    name = "%s%d-%s-t%d-n%d-%s" % (cname, clevel, sname, ts, len(buf), dname)
                    chunk = blosc.compress(buf, typesize=ts, clevel=clevel, shuffle=shuf,
                                           cname=cname)
                    with open(os.path.join(out, name + ".in"), "wb") as f:
                        f.write(buf)
                    with open(os.path.join(out, name + ".blosc"), "wb") as f:
                        f.write(chunk)
                    n += 1
    print(n)


def check(d):
    bad = 0
    for name in sorted(os.listdir(d)):
        if not name.endswith(".b2"):
            continue
        base = name[:-3]
        with open(os.path.join(d, base + ".in"), "rb") as f:
            want = f.read()
        with open(os.path.join(d, name), "rb") as f:
            chunk = f.read()
        try:
            got = blosc.decompress(chunk)
            ok = got == want
        except Exception as e:  # c-blosc refused it
            ok = False
            print("error %s: %s" % (base, e))
        print("%s %s" % ("same" if ok else "DIFFERENT", base))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("make", "check"):
        sys.exit(__doc__)
    sys.exit(make(sys.argv[2]) if sys.argv[1] == "make" else check(sys.argv[2]))
