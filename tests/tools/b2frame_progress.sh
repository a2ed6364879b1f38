#!/bin/bash
# b2frame's progress line: pack, pack --npy, unpack, cat, verify and compact show it on a
# terminal (script(1) gives them one): percent, bytes done of all, rate, time left; it is
# cleared at the end, redrawn at most four times a second, first shown after a second of
# work (B2FRAME_PROGRESS_AFTER), and never shown with -q or when stderr is not a terminal.
. "$top_srcdir/tests/lib/lib.sh"
B2FRAME="$top_builddir/contrib/b2frame"
command -v script >/dev/null || skip_all "script(1) (bsdutils) is not installed"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/b2fs-progress.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

# on_tty LOG COMMAND: runs COMMAND (a shell line) with a terminal for its output
on_tty() { script -qfec "$2" "$1" >/dev/null 2>&1 </dev/null; }
# lines LOG WHAT: the progress lines of command WHAT in LOG, one a line
lines() { tr '\r' '\n' <"$1" | grep -a "^b2frame $2: "; }
full_line() {  # LOG WHAT: a line with percent, done of all, rate and time left
    lines "$1" "$2" | grep -aqE "^b2frame $2: +[0-9]+%  [0-9.]+ [KMG]?i?B of [0-9.]+ [KMG]?i?B  [0-9.]+ [KMG]?i?B/s  [0-9:]+ left"
}
cleared() { grep -aq $'\r\033\[K' "$1"; }

/usr/bin/python3 - <<'EOF'
import struct, math
with open("series.f32", "wb") as f:
    f.write(struct.pack("<%df" % (3 << 20), *(math.sin(i * 1e-3) for i in range(3 << 20))))
EOF
head -c $((12 << 20)) /dev/urandom >random.bin
export B2FRAME_PROGRESS_AFTER=0

on_tty pack.log "'$B2FRAME' pack -s 256K series.f32 series.b2frame"
check "pack: a progress line with percent, done of all, rate, time left" full_line pack.log pack
check "pack: the line is cleared at the end" cleared pack.log
check "pack: the frame holds the input" sh -c "'$B2FRAME' cat series.b2frame | cmp -s - series.f32"

on_tty cat.log "'$B2FRAME' cat series.b2frame >series.out"
check "cat: a progress line" full_line cat.log cat
check "cat: the output is the input" cmp -s series.out series.f32
check "cat: the data did not reach the terminal" sh -c "! grep -aq 'b2frame cat' series.out"

on_tty unpack.log "'$B2FRAME' unpack series.b2frame unpacked.f32"
check "unpack: a progress line" full_line unpack.log unpack
check "unpack: the output is the input" cmp -s unpacked.f32 series.f32

on_tty verify.log "'$B2FRAME' verify series.b2frame"
check "verify: a progress line" full_line verify.log verify
check "verify: the line is cleared before 'ok'" grep -aq $'\r\033\[Kseries.b2frame: ok' verify.log

"$B2FRAME" pack -q -s 64K -l 0 random.bin random.b2frame
on_tty compact.log "'$B2FRAME' compact random.b2frame"
check "compact: a progress line" full_line compact.log compact
check "compact: the frame still holds the input" sh -c "'$B2FRAME' cat random.b2frame | cmp -s - random.bin"

if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    /usr/bin/python3 -c 'import numpy as np; np.save("a.npy", np.arange(3 << 20, dtype=np.float32).reshape(3072, 1024))'
    on_tty npy.log "'$B2FRAME' pack --npy a.npy a.b2frame && '$B2FRAME' unpack a.b2frame b.npy"
    check "pack --npy: a progress line" full_line npy.log pack
    check "unpack to .npy: a progress line" full_line npy.log unpack
    check "the .npy comes back the same" cmp -s a.npy b.npy
else
    fail "python3-numpy is not installed: pack --npy not tested"
fi

# -q: nothing of it, on a terminal too
on_tty quiet.log "'$B2FRAME' pack -q series.f32 q1.b2frame && '$B2FRAME' cat -q q1.b2frame >/dev/null && '$B2FRAME' unpack -q q1.b2frame q1.out && '$B2FRAME' verify -q q1.b2frame && '$B2FRAME' compact -q q1.b2frame"
check "-q: pack, cat, unpack, verify, compact show no progress" sh -c "! tr '\r' '\n' <quiet.log | grep -aq '^b2frame [a-z]*: '"
check "-q: the work was done" cmp -s q1.out series.f32
check "compact --quiet is accepted" "$B2FRAME" compact --quiet q1.b2frame

# stderr not a terminal: nothing of it
"$B2FRAME" pack series.f32 p2.b2frame 2>notty.err
"$B2FRAME" verify -q p2.b2frame 2>>notty.err
"$B2FRAME" cat p2.b2frame 2>>notty.err >/dev/null
check "stderr not a terminal: nothing written to it" test ! -s notty.err

# The default: work that takes under a second shows nothing.
unset B2FRAME_PROGRESS_AFTER
on_tty short.log "'$B2FRAME' verify series.b2frame"
check "under a second of work: no progress line" sh -c "! tr '\r' '\n' <short.log | grep -aq '^b2frame verify: '"

# A slow input (a pipe: no total, so bytes and rate) shows after a second, and the line is
# redrawn at most four times a second.
now() { /usr/bin/python3 -c 'import time; print(time.time())'; }
start=$(now)
on_tty slow.log "(head -c 4M random.bin; sleep 1.4; head -c 4M random.bin; sleep 0.8; head -c 1M random.bin) | '$B2FRAME' pack - slow.b2frame"
secs=$(/usr/bin/python3 -c "print(round($(now) - $start, 2))")
n=$(lines slow.log pack | wc -l)
check "slow pipe: a line of bytes and rate" sh -c "tr '\r' '\n' <slow.log | grep -aqE '^b2frame pack: [0-9.]+ [KMG]?i?B  [0-9.]+ [KMG]?i?B/s'"
max=$(/usr/bin/python3 -c "import math; print(int(math.ceil(4 * $secs)) + 1)")
if [ "$n" -ge 1 ] && [ "$n" -le "$max" ]; then ok "slow pipe: $n redraws in $secs s (at most $max)"
else fail "slow pipe: $n redraws in $secs s (want 1..$max)"; fi
check "slow pipe: the frame holds what came in" test "$("$B2FRAME" cat slow.b2frame | wc -c)" = $((9 << 20))
finish
