#!/usr/bin/env bash
# Where the idle client's instructions go, per heartbeat cycle, in the steady state only: callgrind over a window of
# a long idle hold, with the connections' opening and closing left out. scripts/bench-counts.sh counts whole runs and
# divides the difference of two lengths (±5 % from run to run for idle); this counts one window, exactly, and names
# the functions (repeatable within a few tens of instructions per cycle for the same binary).
#
#   scripts/idle-profile.sh [--connections N] [--window SECONDS] [--records on|off] [--layer client|transport]
#                           [--cache] [--ll SIZE,ASSOC,LINE] [--top N] [--match PATTERN]... [--callers PATTERN]... [--callees PATTERN]...
#                           [--misses N] [--keep FILE]
#       --connections  idle clients (default 500), each pinging one second after its previous pong
#       --window       seconds counted (default 12), starting 3 s after every connection opened
#       --records      the clients' `recordsHeartbeats` (default on, the default configuration)
#       --layer        client (default): `WebSocketClient`s; transport: bare `SocketTransport` connections pinging from
#                      loop timers, no client (`tether-bench idle --layer transport`, the same-run reference)
#       --cache        simulates the caches too (`--cache-sim=yes`): D1 and LL misses per cycle, in all, on the loop's
#                      thread and on the pool's, and the functions and objects with the most misses
#       --ll           with --cache, the simulated last-level cache (valgrind's --LL; default: this machine's, 32 MiB
#                      here, which 500 connections' objects fit in: `--ll 2097152,16,64`, a core's 2 MiB L2, gives 500
#                      connections about the pressure 10,000 put on the 32 MiB L3)
#       --top, --match, --callers, --callees, --misses   passed to scripts/callgrind-per-unit.py (what it prints)
#       --keep FILE    keeps the callgrind output there (for callgrind_annotate)
#   TETHER_BENCH=PATH profiles that tether-bench release binary instead of building one with `swift build -c release`.
#
# The unit is a heartbeat cycle: a call of `SessionMachine.pongReceived` (one per pong a client handles), or with
# `--layer transport` of `IdleTransportReference.Pinger.handle` (in the window, only pongs reach it). Prints
# `profile.*` lines (scripts/callgrind-per-unit.py), the loop thread's and the pool's part (the inclusive cost of
# `EventLoop.run` and of the pool threads' `_dispatch_worker_thread`), and the functions with the largest inclusive
# cost per cycle.
# The server (`tether-bench echo --serve-only 0`) runs in a process of its own, not counted; both run at real-time
# priority when allowed (`chrt -f 50`), as in bench-counts.sh, and tether-bench with the valgrind sigsuspend shim.
set -euo pipefail
cd "$(dirname "$0")/.."

connections=500 window=12 records=on layer=client cache=() per_unit=()
while [ $# -gt 0 ]; do
    case "$1" in
    --connections) connections=${2:?} && shift ;;
    --window) window=${2:?} && shift ;;
    --records) records=${2:?} && shift ;;
    --layer) layer=${2:?} && shift ;;
    --cache) cache=(--cache-sim=yes "${cache[@]:1}") ;;
    --ll) cache=(--cache-sim=yes "--LL=${2:?}") && shift ;;
    --top | --match | --callers | --callees | --misses) per_unit+=("$1" "${2:?}") && shift ;;
    --keep) keep=${2:?} && shift ;;
    *) echo "usage: $0 [--connections N] [--window S] [--records on|off] [--layer client|transport] [--cache]" \
        "[--top N] [--match P] [--callers P] [--callees P] [--misses N] [--keep FILE]" >&2; exit 2 ;;
    esac
    shift
done
case $layer in
client) unit='SessionMachine\.pongReceived' ;;
transport) unit='IdleTransportReference\.Pinger\.handle' ;;
*) echo "idle-profile: --layer client or transport" >&2; exit 2 ;;
esac
for tool in valgrind callgrind_control; do
    command -v "$tool" >/dev/null || { echo "idle-profile: needs $tool (apt-get install valgrind)" >&2; exit 1; }
done

peers_script=idle-profile
# shellcheck source=scripts/peers/setup.sh
source scripts/peers/setup.sh
peers_setup_tether
bench=$(realpath "$bench")
shim=.build/bench-peers/valgrind_sigsuspend.so
peers_compile scripts/peers/valgrind_sigsuspend.c "$shim" cc -O2 -shared -fPIC || { echo "no shim" >&2; exit 1; }
priority=()
chrt -f 50 true 2>/dev/null && priority=(chrt -f 50)

work=$(mktemp -d)
coproc server { exec "${priority[@]}" "$bench" echo --serve-only 0 --stop-on-stdin-eof 2>/dev/null; }
server_pid=$server_PID
server_in=${server[1]}
client_pid=""
cleanup() {
    exec {server_in}>&-
    kill "$server_pid" 2>/dev/null || true
    [ -z "$client_pid" ] || kill "$client_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
read -r _ url <&"${server[0]}"

LD_PRELOAD=$(realpath "$shim") "${priority[@]}" valgrind --tool=callgrind "${cache[@]}" \
    --callgrind-out-file="$work/callgrind.%p" --log-file="$work/valgrind" -- "$bench" idle --url "$url" \
    --connections "$connections" --seconds $((window + 10)) --references none --heartbeat-records "$records" \
    --layer "$layer" >"$work/out" 2>"$work/err" &
client_pid=$!
until grep -q "connections open" "$work/err" 2>/dev/null; do
    kill -0 "$client_pid" 2>/dev/null || { echo "idle-profile: the client ended: $(tail -3 "$work/err")" >&2; exit 1; }
    sleep 0.5
done
sleep 3
callgrind_control -z "$client_pid" >/dev/null
sleep "$window"
callgrind_control -d "$client_pid" >/dev/null
wait "$client_pid" || true
client_pid=""
dump=$(ls "$work"/callgrind.*.1 2>/dev/null | head -1)
[ -n "$dump" ] || { echo "idle-profile: no dump ($(ls "$work"))" >&2; exit 1; }
echo "idle-profile: $connections connections ($layer), records $records, a ${window} s window" >&2
# The threads' parts: the loop's run loop, and the pool's worker threads (where the client's consumers run).
threads='^(EventLoop\.run\(\)|_dispatch_worker_thread[0-9]*)$'
python3 scripts/callgrind-per-unit.py "$dump" "$unit" --match "$threads" "${per_unit[@]}"
if [ -n "${keep:-}" ]; then cp "$dump" "$keep"; fi
