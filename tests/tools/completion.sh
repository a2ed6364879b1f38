#!/bin/bash
# Bash completion of b2frame and b2fs (contrib/completion): commands, options, option
# values, and the files each takes, as bash-completion would offer them.
. "$top_srcdir/tests/lib/lib.sh"
BC=/usr/share/bash-completion/bash_completion
[ -f "$BC" ] || skip_all "bash-completion is not installed ($BC)"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/b2fs-completion.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/dir/sub"
: >"$WORK/dir/a.b2frame"; : >"$WORK/dir/b.b2nd"; : >"$WORK/dir/notes.txt"

# offers COMMAND WORD...: what completing the last WORD offers, one a line (sorted)
offers() {
    local cmd=$1
    shift
    (cd "$WORK/dir" && bash -c '
        . "$1"; . "$2"; shift 2
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        "_$0" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf "%s\n" "${COMPREPLY[@]}"' "$cmd" "$BC" "$top_srcdir/contrib/completion/$cmd" "$cmd" "$@") |
        sort
}
has() { grep -qx -- "$1" <<<"$2"; }

out=$(offers b2frame "")
check "b2frame: all nine commands" [ "$(grep -cxE 'info|cat|pack|unpack|verify|compact|seal|scrub|meta' <<<"$out")" = 9 ]
check "... a prefix narrows them" [ "$(offers b2frame s)" = "$(printf 'scrub\nseal')" ]
check "pack's options" has --no-checksums "$(offers b2frame pack --)"
check "pack -c: the codecs" [ "$(offers b2frame pack -c z | tr '\n' ' ')" = "zlib zstd " ]
check "pack -f: auto among the filters" has auto "$(offers b2frame pack -f a)"
check "info's options" has --json "$(offers b2frame info --)"
check "verify -q" has -q "$(offers b2frame verify -)"
out=$(offers b2frame verify "")
check "verify: frames and directories, not other files" \
    sh -c 'echo "$1" | grep -qx a.b2frame && echo "$1" | grep -qx b.b2nd && echo "$1" | grep -qx sub && ! echo "$1" | grep -qx notes.txt' sh "$out"
check "scrub: directories only" [ "$(offers b2frame scrub "")" = sub ]
check "pack IN: any file" has notes.txt "$(offers b2frame pack "")"

check "b2fs -o: its options" has "push_blocks=" "$(offers b2fs -o p)"
check "b2fs -o: compress_idle= among them" has "compress_idle=" "$(offers b2fs -o comp)"
check "... values after =" [ "$(offers b2fs -o codec=l | tr '\n' ' ')" = "codec=lz4 codec=lz4hc " ]
check "... after a comma, the next option" has "codec=zstd,checksums=off" "$(offers b2fs -o codec=zstd,checksums=o)"
check "... FUSE's own" has allow_other "$(offers b2fs -o all)"
check "b2fs flags" has --version "$(offers b2fs --v)"
check "b2fs BACKING: directories" [ "$(offers b2fs "")" = sub ]
finish
