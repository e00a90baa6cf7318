#!/usr/bin/env bash
# StarPU 1.4.10's trace converter (src/debug/traces/starpu_fxt.c, used by
# starpu_fxt_tool) builds two strings per task with
#   eaten += snprintf(buf + eaten, sizeof(buf) - eaten - 1, ...)
# (the NUMA nodes of its data, 200 bytes; the parameters, 256 bytes).
# snprintf returns the length it would have written, so a task with many
# data handles (about 66 and more: one "-1_" per handle) pushes `eaten` past
# the buffer, the size argument wraps around, and the next snprintf writes
# over the stack: starpu_fxt_tool dies with SIGBUS (seen on starfront's
# extend-add tasks of a 3D Laplacian with small tiles). Clamp instead.
# Usage: starpu-fxt-string-overflow.sh STARPU_SOURCE_DIR
set -euo pipefail
f=$1/src/debug/traces/starpu_fxt.c
python3 - "$f" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
pat = re.compile(r'eaten \+= snprintf\((\w+) \+ eaten, sizeof\(\1\) - eaten - 1, (.*)\);')
def repl(m):
    buf, rest = m.group(1), m.group(2)
    return ('{ /* starfront patch: never write past %s */ '
            'size_t left_ = eaten + 1 < sizeof(%s) ? sizeof(%s) - 1 - eaten : 0; '
            'if (left_) { int n_ = snprintf(%s + eaten, left_, %s); '
            'if (n_ > 0) eaten += (size_t) n_ < left_ ? (size_t) n_ : left_ - 1; } }') % (buf, buf, buf, buf, rest)
s2, n = pat.subn(repl, s)
if n != 2:
    sys.exit("expected 2 'eaten += snprintf' patterns in %s, found %d" % (p, n))
open(p, 'w').write(s2)
PY
