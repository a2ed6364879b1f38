#!/usr/bin/python3
"""Compares two directory trees: the same names; for each entry the same type, permission
bits (with setuid, setgid and sticky), owner, modification time (to the second: tar keeps
no more) and contents (regular files byte for byte, symlink targets); and the same hard
link structure (which names share an inode). Prints each difference; exit 1 if any.
    tree_compare.py TREE_A TREE_B
"""
import hashlib
import os
import stat
import sys


def entries(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            out[os.path.relpath(full, root)] = os.lstat(full)
    return out


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def link_groups(root, ents):
    groups = {}
    for rel, st in ents.items():
        if not stat.S_ISDIR(st.st_mode):
            groups.setdefault((st.st_dev, st.st_ino), []).append(rel)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def main():
    a, b = sys.argv[1], sys.argv[2]
    ea, eb = entries(a), entries(b)
    diffs = []
    for rel in sorted(set(ea) | set(eb)):
        if rel not in ea or rel not in eb:
            diffs.append("%s: only in %s" % (rel, a if rel in ea else b))
            continue
        sa, sb = ea[rel], eb[rel]
        if stat.S_IFMT(sa.st_mode) != stat.S_IFMT(sb.st_mode):
            diffs.append("%s: type %o against %o" % (rel, stat.S_IFMT(sa.st_mode), stat.S_IFMT(sb.st_mode)))
            continue
        if not stat.S_ISLNK(sa.st_mode) and stat.S_IMODE(sa.st_mode) != stat.S_IMODE(sb.st_mode):
            diffs.append("%s: mode %o against %o" % (rel, stat.S_IMODE(sa.st_mode), stat.S_IMODE(sb.st_mode)))
        if (sa.st_uid, sa.st_gid) != (sb.st_uid, sb.st_gid):
            diffs.append("%s: owner %d:%d against %d:%d" % (rel, sa.st_uid, sa.st_gid, sb.st_uid, sb.st_gid))
        if int(sa.st_mtime) != int(sb.st_mtime):
            diffs.append("%s: mtime %d against %d" % (rel, sa.st_mtime, sb.st_mtime))
        if stat.S_ISREG(sa.st_mode):
            if sa.st_size != sb.st_size or digest(os.path.join(a, rel)) != digest(os.path.join(b, rel)):
                diffs.append("%s: contents differ (%d and %d bytes)" % (rel, sa.st_size, sb.st_size))
        elif stat.S_ISLNK(sa.st_mode):
            ta, tb = os.readlink(os.path.join(a, rel)), os.readlink(os.path.join(b, rel))
            if ta != tb:
                diffs.append("%s: symlink to %r against %r" % (rel, ta, tb))
    ga, gb = link_groups(a, ea), link_groups(b, eb)
    if ga != gb:
        diffs.append("hard links: %s against %s" % (ga, gb))
    for d in diffs:
        print(d)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
