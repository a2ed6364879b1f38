# Shell functions the mount benchmarks share (sourced by bench-mount, bench-npy,
# bench-mixed and bench-builds): timing, the page cache, medians and ratios, unmounting,
# passthrough_ll.

dropcache() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# busy and all jiffies of every core so far (/proc/stat: user nice system idle iowait irq
# softirq; steal, time the hypervisor gave to other guests, is neither)
cpu_jiffies() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat; }
# Wall seconds of a command; with BUSY_FILE set, the share of all cores' time that was
# busy meanwhile (any process: the command, the daemons, the kernel) goes there as a
# percentage
secs() {
    local t0 t1 c0 c1
    c0=$(cpu_jiffies); t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N); c1=$(cpu_jiffies)
    [ -n "${BUSY_FILE:-}" ] &&
        echo "$c0 $c1" | awk '{ printf "%.0f", ($4 > $2 ? 100 * ($3 - $1) / ($4 - $2) : 0) }' >"$BUSY_FILE"
    echo "$t0 $t1" | awk '{printf "%.4f", $2 - $1}'
}
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", (s > 0 ? b / s / 1e6 : 0) }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }
# Unmounts $1, trying again for 5 s while it is busy, and waits for its daemon to exit
# (b2fs compresses what waits for it at unmount: the next measure must not run beside
# that); 1 when it stays mounted
umount_wait() {
    local pids p i
    pids=$(pgrep -f -- " $1\$" || true)
    for i in $(seq 50); do fusermount3 -u "$1" 2>/dev/null && break; sleep 0.1; done
    mountpoint -q "$1" && { echo "$1: still mounted" >&2; return 1; }
    for p in $pids; do while kill -0 "$p" 2>/dev/null; do sleep 0.05; done; done
}
# IOPS of random 4 KiB reads of $1 for $2 seconds, the page cache dropped first
fio_iops() {
    dropcache
    fio --name=rr --filename="$1" --rw=randread --bs=4k --ioengine=psync \
        --runtime="$2" --time_based --invalidate=1 --output-format=terse \
        --terse-version=3 2>/dev/null | awk -F';' '{print $8}'
}
# Compiles libfuse's passthrough_ll example (shipped by Debian's libfuse3-dev) to $1:
# built where the benchmark runs, never kept
build_passthrough() {
    local ex=/usr/share/doc/libfuse3-dev/examples
    [ -f "$ex/passthrough_ll.c" ] || { echo "$ex/passthrough_ll.c missing (libfuse3-dev)" >&2; return 1; }
    cc -O2 -w "$ex/passthrough_ll.c" $(pkg-config --cflags --libs fuse3) -o "$1"
}
