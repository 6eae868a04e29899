#!/usr/bin/env bash
# Python's clients, for comparison with `tether-bench echo`: the same figures, measured the same way
# (sequential round trips after a warm-up, for SECONDS each) against the same server, the embedded echo
# `TestServer` of `tether-bench echo --serve-only`:
#   python.rtt_64b_per_s, python.mbps_1m    `websockets` on asyncio (the application on the I/O loop)
#   python.sync_rtt_64b_per_s               `websocket-client`: blocking send and receive on one thread, so
#                                           each round trip costs only the two wake-ups bare TCP costs
# then, for a side-by-side at the same moment, Tether's client against the same server process (`echo.*` lines
# of `tether-bench echo --url URL --layer client`).
#
#   scripts/bench-python-echo.sh [SECONDS]      (default 2.5)
#
# Creates its own virtual environment in .build/bench-venv (pip install websockets websocket-client) on first
# use.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-2.5}"

venv=.build/bench-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import websockets, websocket' 2>/dev/null; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet websockets websocket-client >&2
fi

swift build -c release --product tether-bench >&2
bench="$(swift build -c release --show-bin-path)/tether-bench"

# The server prints `echo.serve_url ws://127.0.0.1:PORT/echo` once it listens, then serves until SIGTERM.
exec 3< <(exec "$bench" echo --serve-only 0)
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
read -r _ url <&3
echo "python: websockets $("$venv/bin/python" -c 'import websockets; print(websockets.__version__)') against $url" >&2

"$venv/bin/python" - "$url" "$seconds" <<'PY'
import asyncio
import sys
import time

from websockets.asyncio.client import connect


async def round_trips(ws, message, warm_up, seconds):
    """Sequential echoes of `message`: a warm-up (at most 1 s), then as many as fit in `seconds`."""
    warm_up_end = time.perf_counter() + 1.0
    for _ in range(warm_up):
        await ws.send(message)
        await ws.recv()
        if time.perf_counter() >= warm_up_end:
            break
    count = 0
    start = time.perf_counter()
    end = start + seconds
    while True:
        await ws.send(message)
        echoed = await ws.recv()
        if len(echoed) != len(message):
            raise SystemExit(f"not an echo: {len(echoed)} bytes for {len(message)}")
        count += 1
        now = time.perf_counter()
        if now >= end:
            return count, now - start


async def main(url, seconds):
    # No compression and no keep-alive pings: the Swift client negotiates no extension either.
    async with connect(url, max_size=None, compression=None, ping_interval=None) as ws:
        count, elapsed = await round_trips(ws, bytes(range(64)), 2000, seconds)
        print(f"python.rtt_64b_per_s {count / elapsed:.0f}", flush=True)
        large = bytes(i * 31 % 256 for i in range(1 << 20))
        count, elapsed = await round_trips(ws, large, 20, seconds)
        print(f"python.mbps_1m {count * len(large) / elapsed / 1e6:.2f}", flush=True)


asyncio.run(main(sys.argv[1], float(sys.argv[2])))
PY

"$venv/bin/python" - "$url" "$seconds" <<'PY'
import socket
import sys
import time

import websocket

url, seconds = sys.argv[1], float(sys.argv[2])
ws = websocket.create_connection(url, enable_multithread=False)
ws.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
message = bytes(range(64))
warm_up_end = time.perf_counter() + 1.0
for _ in range(2000):
    ws.send_binary(message)
    ws.recv()
    if time.perf_counter() >= warm_up_end:
        break
count = 0
start = time.perf_counter()
end = start + seconds
while True:
    ws.send_binary(message)
    echoed = ws.recv()
    if len(echoed) != len(message):
        raise SystemExit(f"not an echo: {len(echoed)} bytes for {len(message)}")
    count += 1
    now = time.perf_counter()
    if now >= end:
        break
print(f"python.sync_rtt_64b_per_s {count / (now - start):.0f}", flush=True)
ws.close()
PY

"$bench" echo --url "$url" --layer client --seconds "$seconds" 2>/dev/null
