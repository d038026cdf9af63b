#!/usr/bin/env bash
# check-layers.sh - the include graph of src/ follows the layers of
# ARCHITECTURE.md, data flowing down only:
#
#     core <- bootstrap <- topo <- transport <- coll <- comm (communicator creation)
#
# topo (which ranks share a host) sits on the records the bootstrap join
# exchanges and under the transports, which choose shm or tcp per peer by it.
# A file of src/<dir>/ may include headers of its own layer and of the layers
# below, never above (so the directory graph has no cycle). Besides: outside
# src/transport, no file includes a transport's private headers (shm.h,
# shm_seg.h, shm_size.h, tcp_internal.h) or calls a shm/tcp function or table
# by name: algorithms go through comm->tp / comm->direct (transport/direct.h).
# Prints the directory graph; exits 1 naming each violation.
#
#   scripts/check-layers.sh [SRC_DIR]     (default: src of this checkout)
set -u
src=${1:-"$(cd "$(dirname "$0")/.." && pwd)/src"}
layers=(core bootstrap topo transport coll comm)
rank_of() { local i; for i in "${!layers[@]}"; do [ "${layers[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }

fail=0
declare -A edges=()
while IFS= read -r f; do
    rel=${f#"$src"/}
    from=${rel%%/*}
    rf=$(rank_of "$from")
    if [ "$rf" -lt 0 ]; then echo "FAIL: $rel: src/$from is not a known layer (${layers[*]})"; fail=1; continue; fi
    while IFS=: read -r line inc; do
        to=${inc%%/*}
        [ "$to" = "$inc" ] && continue          # "coll.h" and other public headers
        rt=$(rank_of "$to")
        [ "$rt" -lt 0 ] && continue
        [ "$to" != "$from" ] && edges["$from -> $to"]=$(( ${edges["$from -> $to"]:-0} + 1 ))
        if [ "$rt" -gt "$rf" ]; then
            echo "FAIL: $rel:$line includes $inc (layer $to is above $from)"; fail=1
        fi
        if [ "$from" != transport ]; then
            case "$inc" in
            transport/shm.h|transport/shm_seg.h|transport/shm_size.h|transport/tcp_internal.h)
                echo "FAIL: $rel:$line includes $inc (private to src/transport)"; fail=1 ;;
            esac
        fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p;=' "$f" |
             sed -n 'N;s/^\(.*\)\n\([0-9]*\)$/\2:\1/p;D' 2>/dev/null || true)
done < <(find "$src" -name '*.[ch]' | sort)

# calls and tables by name, outside the transports (comments ignored roughly:
# lines starting with * or //)
hits=$(grep -rnE '\bcoll_(shm|tcp)_[a-z_]+\b' "$src" --include='*.[ch]' |
       grep -v "^$src/transport/" | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(\*|//|/\*)' || true)
if [ -n "$hits" ]; then
    echo "FAIL: shm/tcp named outside src/transport:"; echo "$hits" | sed "s|^$src/|  src/|"; fail=1
fi

echo "directory graph (includes, a -> b: a includes b):"
for e in "${!edges[@]}"; do echo "  $e (${edges[$e]})"; done | sort
[ $fail -eq 0 ] && echo "layers ok: ${layers[*]} (each includes only itself and those before it)"
exit $fail
