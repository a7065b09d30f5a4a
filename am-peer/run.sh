#!/bin/sh
# Runs the harness with the pinned tinygrad: ./am-peer/run.sh --part navi31 [...]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/am-peer/install.sh" >/dev/null
PYTHONPATH="$root/am-peer:$root/target/am-peer/site" exec python3 -m am_peer.run "$@"
