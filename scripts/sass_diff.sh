#!/usr/bin/env bash
# sass_diff.sh — which kernels' machine code differs between two builds.
#
#   scripts/sass_diff.sh BUILD_A BUILD_B        (build directories, object files or libraries)
#   scripts/sass_diff.sh --dump BUILD OUT.txt   (one build's normalised SASS, kernel by kernel)
#
# Dumps the SASS of every CUDA object under each build (cuobjdump -sass), splits it per
# kernel, and normalises what moves without the code changing: instruction addresses and
# encodings, the hashes nvcc puts into the names of file-local symbols, and the offsets of
# __constant__ variables (bank 3), which depend on which other variables share the object.
# Kernels are matched by (normalised) name across all objects, so moving a kernel from one
# .cu file to another is no difference. Each kernel's registers, stack and shared memory
# (cuobjdump -res-usage) are compared with its instructions. Prints one line per kernel that changed, was added
# or removed, and a count of the unchanged ones; exits 1 when any kernel changed.
#
# cuobjdump comes with the CUDA toolkit, or from PyPI (nvidia-cuda-cuobjdump); set
# CUOBJDUMP to its path when it is not on PATH.
set -euo pipefail

CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump || echo "$(dirname "$(command -v nvcc)")/cuobjdump")}
[ -x "$CUOBJDUMP" ] || { echo "sass_diff.sh: no cuobjdump (set CUOBJDUMP)" >&2; exit 2; }

# The objects of a build: its CUDA object files (*.cu.o, as CMake names them), or the file.
objects() {
  if [ -d "$1" ]; then
    find "$1" -name '*.cu.o' -type f | sort
  else
    echo "$1"
  fi
}

# Normalised SASS of everything in $1, as "== kernel" headers followed by instructions.
dump() {
  local f
  for f in $(objects "$1"); do
    "$CUOBJDUMP" -res-usage "$f" 2>/dev/null | sed -n 's/^ *Function \([^:]*\):/RES \1/p;s/^ *\(REG:.*\)/RESV \1/p' || true
    "$CUOBJDUMP" -sass "$f" 2>/dev/null || true
  done | python3 -c '
import re, sys
out, name, body = {}, None, []
def flush():
    if name is not None:
        out.setdefault(name, []).append("\n".join(body))
res, last = {}, None
norm = lambda n: re.sub(r"(_GLOBAL__N__|__nv_static_\d+__)[0-9a-f_]+", r"\1H", n)
for line in sys.stdin:
    if line.startswith("RES "):
        last = norm(line[4:].strip()); continue
    if line.startswith("RESV "):
        res.setdefault(last, []).append("resources " + re.sub(r"CONSTANT\[3\]:\d+", "", line[5:].strip())); continue
    m = re.match(r"\s*Function : (\S+)", line)
    if m:
        flush()
        name, body = re.sub(r"(_GLOBAL__N__|__nv_static_\d+__)[0-9a-f_]+", r"\1H", m.group(1)), []
        continue
    if name is None:
        continue
    s = re.sub(r"/\*[0-9a-f]{4,}\*/", "", line)          # addresses
    s = re.sub(r"/\* 0x[0-9a-f]{16} \*/", "", s)          # encodings
    s = re.sub(r"(_GLOBAL__N__|__nv_static_\d+__)[0-9a-f_]+", r"\1H", s)
    s = re.sub(r"c\[0x3\]\[0x[0-9a-f]+\]", "c[0x3][C]", s)
    s = s.strip()
    if s.endswith(";"):  # instructions only, not the fatbin headers between functions
        body.append(s)
flush()
for k in sorted(out):
    print("== " + k)
    print("\n".join(sorted(res.get(k, [])) + sorted(out[k])))
'
}

if [ "${1:-}" = "--dump" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --dump BUILD OUT.txt" >&2; exit 2; }
  dump "$2" > "$3"
  exit 0
fi
[ $# -eq 2 ] || { echo "usage: $0 BUILD_A BUILD_B | --dump BUILD OUT.txt" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for side in a b; do
  src=$1; [ $side = b ] && src=$2
  if [ -f "$src" ] && head -c 3 "$src" | grep -q '== '; then cp "$src" "$tmp/$side"; else dump "$src" > "$tmp/$side"; fi
done
python3 - "$tmp/a" "$tmp/b" <<'EOF'
import sys
def load(p):
    k, d = None, {}
    for line in open(p):
        line = line.rstrip("\n")
        if line.startswith("== "):
            k = line[3:]; d[k] = []
        elif k is not None:
            d[k].append(line)
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
same = changed = 0
for k in sorted(set(a) | set(b)):
    if k not in b: print("removed ", k); changed += 1
    elif k not in a: print("added   ", k); changed += 1
    elif a[k] != b[k]:
        print("changed  %s (%d -> %d instructions)" % (k, len(a[k]), len(b[k]))); changed += 1
    else: same += 1
print("%d kernels unchanged, %d changed/added/removed" % (same, changed))
sys.exit(1 if changed else 0)
EOF
