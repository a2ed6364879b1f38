# Shared by the shell tests: counting, loud skips, and where things are.
# A test sources this, calls ok/fail (or check CMD...), and ends with `finish`.
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$PWD}"
DATA="$top_srcdir/tests/data"
PY_BLOSC=/usr/bin/python3   # Debian's python3-blosc lives in Debian's interpreter
n_pass=0
n_fail=0

ok()   { n_pass=$((n_pass + 1)); echo "ok: $*"; }
fail() { n_fail=$((n_fail + 1)); echo "FAIL: $*"; }
# check "description" command...: passes when the command exits 0
check() { local d="$1"; shift; if "$@"; then ok "$d"; else fail "$d"; fi; }

# A skip is never a pass: it says so loudly and exits 77 (automake's SKIP).
skip_all() {
    echo "########################################################" >&2
    echo "SKIPPED $(basename "$0"): $*" >&2
    echo "########################################################" >&2
    echo "0 passed, 0 failed, 1 skipped"
    exit 77
}

finish() {
    echo "$n_pass passed, $n_fail failed"
    [ "$n_fail" -eq 0 ] && [ "$n_pass" -gt 0 ]
}
