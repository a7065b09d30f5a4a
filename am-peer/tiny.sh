#!/bin/sh
# tinygrad itself on the model (am_peer/tiny.py): ./am-peer/tiny.sh --part navi31 --backend LIB.so [--n N]
# NumPy comes from Debian (python3-numpy); a python3 on PATH without it
# (e.g. a pyenv one) gives way to Debian's /usr/bin/python3.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/am-peer/install.sh" >/dev/null
py=python3
if ! python3 -c 'import numpy' 2>/dev/null && [ -x /usr/bin/python3 ]; then py=/usr/bin/python3; fi
PYTHONPATH="$root/am-peer:$root/target/am-peer/site" exec "$py" -m am_peer.tiny "$@"
