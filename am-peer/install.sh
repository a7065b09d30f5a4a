#!/bin/sh
# Installs the pinned peer, tinygrad==0.14.0, from PyPI into
# target/am-peer/site. pip checks the wheel against the sha256 in
# requirements.txt (--require-hashes) and refuses anything else; the
# script then checks the installed version. Idempotent.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
site="$root/target/am-peer/site"
want=0.14.0
if [ -f "$site/tinygrad-$want.dist-info/METADATA" ]; then
  echo "am-peer: tinygrad $want already in $site"
  exit 0
fi
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --only-binary=:all: \
  --require-hashes --target "$site" -r "$root/am-peer/requirements.txt"
got=$(PYTHONPATH="$site" python3 -c 'import importlib.metadata as m; print(m.version("tinygrad"))')
[ "$got" = "$want" ] || { echo "am-peer: installed tinygrad $got, want $want" >&2; exit 1; }
echo "am-peer: tinygrad $want installed in $site (wheel sha256 checked by pip --require-hashes)"
