"""Helpers of mount_integrity.sh: bit flips in frames written through the mount, read back
through it, and where a chunk lies in a frame.

  flips MNT BACK N SEED DIR...   for each DIR (a directory of the mount holding `series`),
                                 N times: a copy of its backing frame with one random bit
                                 flipped, read whole through the mount; prints a line a
                                 DIR and fails if any read gave bytes other than the file's
  chunk FRAME N                  prints the file offset and stored size of chunk N
"""
import errno
import json
import os
import random
import subprocess
import sys


def read_all(path):
    with open(path, "rb") as f:
        return f.read()


def flips(mnt, back, n, seed, dirs):
    rnd = random.Random(seed)
    bad = 0
    for d in dirs:
        frame = read_all(os.path.join(back, d, "series.b2frame"))
        want = read_all(os.path.join(mnt, d, "series"))
        counts = {"error": 0, "right": 0, "wrong": 0, "other": 0}
        for k in range(n):
            pos = rnd.randrange(len(frame))
            bit = rnd.randrange(8)
            flipped = bytearray(frame)
            flipped[pos] ^= 1 << bit
            name = "flip-%d" % k
            with open(os.path.join(back, d, name + ".b2frame"), "wb") as f:
                f.write(flipped)
            try:
                got = read_all(os.path.join(mnt, d, name))
                if got == want:
                    counts["right"] += 1
                else:
                    counts["wrong"] += 1
                    print("%s: flip of bit %d at %d of %d: other bytes served"
                          % (d, bit, pos, len(frame)))
            except OSError as e:
                if e.errno == errno.EIO:
                    counts["error"] += 1
                else:
                    counts["other"] += 1
                    print("%s: flip at %d: %s" % (d, pos, e))
            os.unlink(os.path.join(back, d, name + ".b2frame"))
        print("%s: %d flips: %d EIO, %d right bytes, %d other bytes, %d other errors"
              % (d, n, counts["error"], counts["right"], counts["wrong"], counts["other"]))
        bad += counts["wrong"] + counts["other"]
    return 1 if bad else 0


def chunk(frame, n):
    out = subprocess.run([os.environ["B2FRAME"], "info", "-c", "--json", frame],
                         check=True, capture_output=True).stdout
    c = json.loads(out)["chunks"][n]
    print(c["file_offset"], c["cbytes"])
    return 0


def main():
    cmd = sys.argv[1]
    if cmd == "flips":
        return flips(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6:])
    if cmd == "chunk":
        return chunk(sys.argv[2], int(sys.argv[3]))
    raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    sys.exit(main())
