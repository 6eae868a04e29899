#!/usr/bin/env bash
# Interop with third-party peers, both directions: Tether's client against Python's `websockets` server and Node's
# `ws` server, and Tether's test server against their clients (Tests/TetherTests/Interop, scripts/interop/peer.py,
# scripts/interop/ws-peer.cjs). Among them, what apps do with a compressed connection: several tasks sending at once
# over permessage-deflate with context takeover to websockets' echo, every echo checked byte for byte and each
# task's order kept (ClientInteropTests.concurrentCompressedSenders...). Then, as a step of its own, the randomized
# suite against websockets (RandomizedUseInteropTests: a fixed seed and a fresh one, printed on failure; more with
# TETHER_RANDOMIZED_ROUNDS, one replayed with TETHER_RANDOMIZED_SEED, as in RandomizedUseTests).
#
#   scripts/interop.sh [swift test options]...
#
# Creates (or reuses) a virtual environment with websockets==17.4, in $TETHER_INTEROP_VENV (default
# ~/.cache/tether-interop/venv), then runs `swift test --filter Interop` with TETHER_INTEROP_PYTHON and
# TETHER_INTEROP_PEER set; without them those tests are skipped. Everything stays on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."

websockets_version=17.4
venv="${TETHER_INTEROP_VENV:-$HOME/.cache/tether-interop/venv}"
python="$venv/bin/python"

has_websockets() {
    "$python" -c "import sys, websockets; sys.exit(websockets.__version__ != '$websockets_version')" 2>/dev/null
}

if ! has_websockets; then
    mkdir -p "$(dirname "$venv")"
    if ! python3 -m venv --clear "$venv" >&2; then
        # Debian's python3 leaves out venv and ensurepip: they come with python3-venv.
        if [ "$(id -u)" -ne 0 ]; then
            echo "interop: python3 -m venv failed; install python3-venv (Debian) and retry" >&2
            exit 1
        fi
        apt-get update >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv >&2
        python3 -m venv --clear "$venv" >&2
    fi
    "$python" -m pip install --quiet --disable-pip-version-check "websockets==$websockets_version" >&2
    has_websockets
fi
echo "interop: $("$python" --version), websockets $websockets_version, in $venv" >&2

export TETHER_INTEROP_PYTHON="$python"
export TETHER_INTEROP_PEER="$PWD/scripts/interop/peer.py"

# Node's `ws`, the second peer (scripts/interop/ws-peer.cjs): Debian's nodejs and node-ws packages, through apt.
# (npm's registry would let the script install ws into a directory of its own, but it does not resolve from every
# machine CI runs on; Debian's mirror does.) Without them the Node suite is skipped, and says so.
ws_modules=/usr/share/nodejs
has_ws() {
    command -v node >/dev/null 2>&1 && NODE_PATH="$ws_modules" node -e 'require("ws")' 2>/dev/null
}
if ! has_ws && [ "$(id -u)" -eq 0 ]; then
    apt-get update >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs node-ws >&2 || true
fi
if has_ws; then
    echo "interop: node $(node --version), ws $(NODE_PATH="$ws_modules" node -p 'require("ws/package.json").version')" >&2
    export TETHER_INTEROP_NODE="$(command -v node)"
    export TETHER_INTEROP_WS_PEER="$PWD/scripts/interop/ws-peer.cjs"
    export NODE_PATH="$ws_modules"
else
    echo "interop: Node's ws is not available: the Node suite is skipped" >&2
fi
swift test --filter Interop --skip RandomizedUseInteropTests "$@"
echo "interop: the randomized suite against websockets (RandomizedUseInteropTests)" >&2
swift test --filter RandomizedUseInteropTests "$@"
