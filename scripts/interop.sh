#!/usr/bin/env bash
# Interop with a third-party peer, both directions: Tether's client against Python's `websockets` server, and
# Tether's test server against Python's `websockets` client (Tests/TetherTests/Interop, scripts/interop/peer.py).
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
swift test --filter Interop "$@"
