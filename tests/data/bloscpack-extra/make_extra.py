#!/usr/bin/python3
"""Makes the extra Bloscpack test files here: checksum kinds and shapes the fixtures in
../bloscpack lack. Chunks come from c-blosc 1.21 (Debian's python3-blosc), checksums from
Python's zlib and hashlib, so the reader is checked against independent code.
Run with Debian's interpreter: /usr/bin/python3 make_extra.py"""
import hashlib, math, struct, zlib
import blosc

def series(n, typesize):
    vals = [math.sin(i / 50.0) * 1000.0 + i * 0.01 for i in range(n // typesize + 1)]
    fmt = '<%dd' % len(vals) if typesize == 8 else '<%df' % len(vals)
    return struct.pack(fmt, *vals)[:n]

def text(n):
    words = b"the quick brown fox jumps over a lazy dog while blosc packs chunks ".split()
    out, i = bytearray(), 0
    while len(out) < n:
        out += words[(i * 7) % len(words)] + b" "
        i += 1
    return bytes(out[:n])

def digest(kind, buf):
    if kind == 0:
        return b""
    if kind == 1:
        return struct.pack('<I', zlib.adler32(buf) & 0xffffffff)
    if kind == 2:
        return struct.pack('<I', zlib.crc32(buf) & 0xffffffff)
    name = ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512'][kind - 3]
    return hashlib.new(name, buf).digest()

CK = ['none', 'adler32', 'crc32', 'md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512']

def write(name, data, sizes, typesize, cname, checksum, offsets, declare=True, note='plain'):
    chunks, pos = [], 0
    for s in sizes:
        chunks.append(blosc.compress(data[pos:pos + s], typesize=typesize, cname=cname, clevel=5,
                                     shuffle=blosc.SHUFFLE))
        pos += s
    assert pos == len(data)
    uniform = len(set(sizes[:-1])) <= 1
    chunk_size = sizes[0] if declare and sizes and uniform else -1
    last = sizes[-1] if declare and sizes and uniform else -1
    nchunks = len(sizes) if declare else -1
    head = b'blpk' + bytes([2, 1 if offsets else 0, checksum, typesize])
    head += struct.pack('<iiq', chunk_size, last, nchunks) + bytes(8)
    body, offs = b'', []
    start = len(head) + (8 * len(sizes) if offsets else 0)
    for c in chunks:
        offs.append(start + len(body))
        body += c + digest(checksum, c)
    table = b''.join(struct.pack('<q', o) for o in offs) if offsets else b''
    with open(name, 'wb') as f:
        f.write(head + table + body)
    return '\t'.join([name, str(len(data)), hashlib.sha256(data).hexdigest(), cname, str(typesize),
                      str(chunk_size), '1' if offsets else '0', CK[checksum], note])

rows = [
    write('f64-lz4-c16384-off-md5.blp', series(3 * 16384 + 1000, 8), [16384] * 3 + [1000], 8, 'lz4', 3, True),
    write('f32-zlib-c20000-nooff-sha1.blp', series(50000, 4), [20000, 20000, 10000], 4, 'zlib', 4, False),
    write('f32-zstd-var-off-sha224.blp', series(17007, 4), [5000, 12000, 7], 4, 'zstd', 5, True,
          note='variable-chunks'),
    write('text-blosclz-c30000-off-sha384.blp', text(30000), [30000], 1, 'blosclz', 7, True),
    write('text-lz4-var-nooff-adler32-unknown.blp', text(25001), [10000, 15000, 1], 1, 'lz4', 1, False,
          declare=False, note='sizes-unknown'),
    write('empty-off-crc32.blp', b'', [], 1, 'lz4', 2, True, note='empty'),
]
with open('MANIFEST.tsv', 'w') as f:
    f.write('file\tnbytes\tsha256\tcodec\ttypesize\tchunksize\toffsets\tchecksum\tnote\n')
    f.write('\n'.join(rows) + '\n')
