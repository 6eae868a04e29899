#!/usr/bin/env bash
# Counts that do not drift, beside the wall-clock benchmarks: system calls (`strace -f -c`) and user-space
# instructions (`valgrind --tool=callgrind`, every thread) per unit of work, for Tether, for the peers
# scripts/bench-peers.sh runs (picows, Boost.Beast) and for a bare C client written for this
# (scripts/peers/bare_c_client.c), each beside its ratio to the bare C reference. The same binary on the same input
# gives the same counts whatever else the machine is doing, where times on this VM move by ±30 % from run to run.
#
#   scripts/bench-counts.sh [--quick] [--clients LIST]
#       --quick     as CI runs it: shorter runs and 200 idle connections
#       --clients   only these clients (comma-separated names below, such as tether_loop,tether); the C reference
#                   (c_epoll) always runs, since every ratio is to it
#   TETHER_BENCH=PATH uses that tether-bench release binary instead of building one with `swift build -c release`.
#
# Units of work:
#   a 64-byte round trip   one connection sends a 64-byte binary message and reads its echo, again and again
#                          (`tether-bench echo --round-trips N`, `picows_echo.py count`, `beast_echo_client
#                          --round-trips`, `bare_c_client echo`)
#   a heartbeat cycle      one ping and its pong, on each of CONNECTIONS connections pinging one second after their
#                          previous pong (`tether-bench idle --url … --references none`, `bare_c_client idle`)
#   a 1 MiB echo           one connection sends a 1 MiB binary message and reads its echo, again and again
#                          (`tether-bench echo --large-messages N`): Tether's alone, to follow its copies per message
# Each client runs at two lengths (N and 3 × N round trips; holds of S and 3 × S seconds) under each counter, and a
# figure is the difference between the two runs' counts divided by the difference in units (round trips; pongs seen
# in the whole run): starting, connecting and stopping cancel out. Every client connects to one server,
# `tether-bench echo --serve-only 0` in a process of its own (pinned to CPU 1, the clients to CPU 0, as in
# bench-peers.sh), which the counters do not follow. The server and the idle clients run at real-time priority
# (`chrt -f 50`, as root): how many pings share a wake-up depends on how promptly they run, and other work on the
# machine would otherwise change the wake-up calls per cycle from one run to the next.
#
# Prints `name value` lines:
#   counts.echo.CLIENT.syscalls_per_rt  counts.echo.CLIENT.instructions_per_rt
#   counts.echo.CLIENT.syscalls_vs_c    counts.echo.CLIENT.instructions_vs_c     (over c_epoll's: the reference)
#       CLIENT: c_epoll (the reference: one epoll loop, a write, an epoll_wait, a read), c_blocking (a write and a
#       blocking read, Beast's shape), c_uring (io_uring: the send and the next receive in one io_uring_enter),
#       beast, picows, tether_pool (the client, its consumer on the global pool: the default), tether_loop (the
#       consumer on `client.eventExecutor`), tether_transport (a bare `SocketTransport` connection, no client)
#   counts.echo.tether_pool.syscalls_over_beast  counts.echo.tether_loop.syscalls_over_beast   (target: ≤ 1)
#   counts.idle.CLIENT.syscalls_per_cycle  counts.idle.CLIENT.instructions_per_cycle  …_vs_c (over c_epoll's)
#       CLIENT: c_epoll (the reference: one write per ping, one read per pong, a 10 ms timer wheel), c_uring (the
#       same on io_uring), tether (the default configuration: heartbeat records on, consumer on the pool),
#       tether_records_off (`recordsHeartbeats = false`), tether_transport (bare transport connections pinging from
#       loop timers, no client)
#   counts.idle.tether.syscalls_over_c  counts.idle.tether_records_off.syscalls_over_c             (target: ≤ 0.5)
#   counts.large.CLIENT.syscalls_per_msg  counts.large.CLIENT.instructions_per_msg
#       CLIENT: tether_pool (the client, consumer on the pool), tether_transport (a bare `SocketTransport` connection)
#   counts.uring_available   1 when the kernel lets a process set up an io_uring (c_uring runs only then)
# and, on standard error, each client's system calls per unit by name.
#
# Sets itself up: strace and valgrind through apt-get when missing (as root); picows, Beast and the C client as
# bench-peers.sh does (scripts/peers/setup.sh). A client or counter that cannot be set up, or a run that fails, is
# skipped with a warning: no figure fails the run (CI prints them).
set -euo pipefail
cd "$(dirname "$0")/.."

round_trips=3000 connections=1000 hold=3 large=30 only=""
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) round_trips=1000 connections=200 hold=2 large=10 ;;
    --clients) only=",${2:?--clients needs a list},c_epoll," && shift ;;
    *) echo "usage: $0 [--quick] [--clients LIST]" >&2; exit 2 ;;
    esac
    shift
done

peers_script=bench-counts
# shellcheck source=scripts/peers/setup.sh
source scripts/peers/setup.sh
warn() { peers_warn "$@"; }

need() {  # need COMMAND PACKAGE: installs PACKAGE when COMMAND is missing and this is root; fails when still missing
    command -v "$1" >/dev/null && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "bench-counts: installing $2" >&2
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null; } >&2 || true
    fi
    command -v "$1" >/dev/null && return 0
    warn "no $1 (install $2): its counts skipped"
    return 1
}
counters=()
need strace strace && counters+=(syscalls)
need valgrind valgrind && counters+=(instructions)
[ ${#counters[@]} -gt 0 ] || { warn "neither strace nor valgrind: nothing counted"; exit 0; }

if ! peers_setup_c; then
    warn "no C reference: nothing to divide by, nothing counted"
    exit 0
fi
# Valgrind 3.19 stops on the read-only mask libdispatch passes to sigsuspend: tether-bench runs with a copy
# (scripts/peers/valgrind_sigsuspend.c says why).
shim=.build/bench-peers/valgrind_sigsuspend.so
if ! peers_compile scripts/peers/valgrind_sigsuspend.c "$shim" cc -O2 -shared -fPIC; then
    warn "the valgrind shim did not compile: Tether's instructions may not be counted"
    shim=""
fi
uring_available=$("$bare_c" uring-probe | awk '{ print $2 }')
have_beast=1 have_picows=1
peers_setup_beast || have_beast=0
peers_setup_picows || have_picows=0

peers_setup_tether
bench=$(realpath "$bench")

server_pin=() client_pin=() idle_priority=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    server_pin=(taskset -c 1) client_pin=(taskset -c 0)
fi
# How many pings share a wake-up (and so the epoll_wait, futex and io_uring_enter calls per cycle) depends on how
# promptly the idle client and the server run: under other work they batch differently from one run to the next,
# and the difference between the two runs means nothing (a run beside a ThreadSanitizer build gave negative
# figures). Real-time priority (as root) lets them run as on a quiet machine; the idle work takes a few % of a core,
# and the kernel keeps 5 % of each core for everything else.
if chrt -f 50 true 2>/dev/null; then
    server_pin+=(chrt -f 50) idle_priority=(chrt -f 50)
else
    warn "no real-time priority (chrt -f 50): idle wake-up counts will move with the machine's load"
fi

# The server stops when its standard input (this script's end of the coprocess pipe) closes.
coproc server { exec "${server_pin[@]}" "$bench" echo --serve-only 0 --stop-on-stdin-eof 2>/dev/null; }
server_pid=$server_PID
server_in=${server[1]}
work=$(mktemp -d)
cleanup() {
    exec {server_in}>&-
    kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
read -r _ url <&"${server[0]}"
port=${url#ws://127.0.0.1:}
port=${port%%/*}
path=/${url#ws://127.0.0.1:*/}
echo "bench-counts: server $url; echo $round_trips and $((3 * round_trips)) round trips," \
    "idle $connections connections for $hold and $((3 * hold)) s, $large and $((3 * large)) 1 MiB echoes" >&2

# The command line of CLIENT doing LENGTH units of work, into `command`; and, after it ran, how many units it did.
command_for() {  # command_for echo|idle CLIENT LENGTH
    local length=$3
    case "$1.$2" in
    echo.c_epoll | echo.c_blocking | echo.c_uring) command=("$bare_c" echo "$url" "$length" "${2#c_}") ;;
    echo.beast) command=("$beast" 127.0.0.1 "$port" "$path" --round-trips "$length") ;;
    echo.picows) command=("$python" scripts/peers/picows_echo.py count "$url" "$length") ;;
    echo.tether_pool)
        command=("$bench" echo --url "$url" --layer client --only rtt_64b_per_s --round-trips "$length")
        ;;
    echo.tether_loop)
        command=("$bench" echo --url "$url" --layer client --only rtt_64b_loop_consumer_per_s --round-trips "$length")
        ;;
    echo.tether_transport)
        command=("$bench" echo --url "$url" --layer transport --only transport_rtt_64b_per_s --round-trips "$length")
        ;;
    large.tether_pool)
        command=("$bench" echo --url "$url" --layer client --only mbps_1m --large-messages "$length")
        ;;
    large.tether_transport)
        command=("$bench" echo --url "$url" --layer transport --only transport_mbps_1m --large-messages "$length")
        ;;
    idle.c_epoll | idle.c_uring) command=("$bare_c" idle "$url" "$connections" "$length" "${2#c_}") ;;
    idle.tether | idle.tether_records_off | idle.tether_transport)
        command=("$bench" idle --url "$url" --connections "$connections" --seconds "$length" --references none)
        if [ "$2" = tether_records_off ]; then command+=(--heartbeat-records off); fi
        if [ "$2" = tether_transport ]; then command+=(--layer transport); fi
        ;;
    esac
}
units_done() {  # units_done echo|idle|large LENGTH: from the run's output in $work/out
    if [ "$1" != idle ]; then
        echo "$2"
    else
        awk '$1 ~ /pongs_total$/ { print $2 }' "$work/out"
    fi
}

# Runs `command` under COUNTER; prints the count (every thread of the process, user space for instructions).
run_counted() {  # run_counted syscalls|instructions echo|idle|large
    local run=("${client_pin[@]}")
    if [ "$2" = idle ]; then run+=("${idle_priority[@]}"); fi
    if [ "$1" = syscalls ]; then
        "${run[@]}" strace -f -c -o "$work/strace" -- "${command[@]}" >"$work/out" 2>"$work/err" || return 1
        awk '$NF == "total" { print $4 }' "$work/strace"
    else
        local preload=""
        [[ "${command[0]}" == "$bench" && -n "$shim" ]] && preload=$(realpath "$shim")
        LD_PRELOAD=$preload "${run[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
            --log-file="$work/valgrind" -- "${command[@]}" >"$work/out" 2>"$work/err" || return 1
        sed -n 's/.*Collected : *//p' "$work/valgrind"
    fi
}

declare -A figures
# Counts CLIENT's KIND of work with every counter at LENGTH and 3 × LENGTH; keeps the per-unit figures.
count() {  # count echo|idle|large CLIENT LENGTH
    local kind=$1 client=$2 unit=cycle counter length total units
    if [ "$kind" = echo ]; then unit=rt; fi
    if [ "$kind" = large ]; then unit=msg; fi
    for counter in "${counters[@]}"; do
        local totals=() done_units=()
        for length in "$3" "$((3 * $3))"; do
            command_for "$kind" "$client" "$length"
            if ! total=$(run_counted "$counter" "$kind"); then
                warn "$client ($kind, $counter) failed: $(tail -2 "$work/err" | tr '\n' ' ')"
                return 0
            fi
            units=$(units_done "$kind" "$length")
            totals+=("$total") done_units+=("$units")
            if [ "$counter" = syscalls ]; then cp "$work/strace" "$work/strace.$length"; fi
        done
        local delta=$((done_units[1] - done_units[0]))
        if [ "$delta" -le 0 ]; then
            warn "$client ($kind): no more units in the longer run (${done_units[*]}): skipped"
            return 0
        fi
        local per_unit
        per_unit=$(awk -v a="${totals[0]}" -v b="${totals[1]}" -v d="$delta" 'BEGIN { printf "%.6f", (b - a) / d }')
        if [[ "$per_unit" == -* ]]; then
            warn "$client ($kind, $counter): fewer in the longer run (${totals[*]}): disturbed, skipped"
            continue
        fi
        figures[$kind.$client.${counter}_per_$unit]=$per_unit
        if [ "$counter" = syscalls ]; then  # by name, on standard error
            awk -v d="$delta" -v who="bench-counts: $kind $client, system calls per $unit:" '
                FNR == 1 { file++ }
                $NF != "total" && $4 ~ /^[0-9]+$/ { calls[$NF] += (file == 1 ? -$4 : $4) }
                END {
                    line = who
                    for (name in calls) {
                        if (calls[name] / d >= 0.005) line = line sprintf(" %s %.2f", name, calls[name] / d)
                    }
                    print line
                }' "$work/strace.$3" "$work/strace.$((3 * $3))" >&2
        fi
    done
}

echo_clients=(c_epoll c_blocking)
[ "$uring_available" = 1 ] && echo_clients+=(c_uring)
[ "$have_beast" = 1 ] && echo_clients+=(beast)
[ "$have_picows" = 1 ] && echo_clients+=(picows)
echo_clients+=(tether_pool tether_loop tether_transport)
idle_clients=(c_epoll)
[ "$uring_available" = 1 ] && idle_clients+=(c_uring)
idle_clients+=(tether tether_records_off tether_transport)

chosen() {  # chosen CLIENT: whether --clients (if given) names it
    [ -z "$only" ] || [[ "$only" == *",$1,"* ]]
}
for client in "${echo_clients[@]}"; do chosen "$client" && count echo "$client" "$round_trips"; done
for client in "${idle_clients[@]}"; do chosen "$client" && count idle "$client" "$hold"; done
large_clients=(tether_pool tether_transport)
for client in "${large_clients[@]}"; do chosen "$client" && count large "$client" "$large"; done

# The figures, each with its ratio to the C reference, then the targets' differences.
show() {  # show NAME VALUE FORMAT
    printf "counts.%s $3\n" "$1" "$2"
}
echo "counts.uring_available ${uring_available:-0}"
for kind in echo idle large; do
    case $kind in
    echo) unit=rt clients=("${echo_clients[@]}") ;;
    idle) unit=cycle clients=("${idle_clients[@]}") ;;
    large) unit=msg clients=("${large_clients[@]}") ;;
    esac
    for client in "${clients[@]}"; do
        for counter in syscalls instructions; do
            name=$kind.$client.${counter}_per_$unit
            reference=${figures[$kind.c_epoll.${counter}_per_$unit]:-}
            [ -n "${figures[$name]:-}" ] || continue
            if [ "$counter" = syscalls ]; then
                show "$name" "${figures[$name]}" "%.2f"
            else
                show "$name" "${figures[$name]}" "%.0f"
            fi
            if [ "$client" != c_epoll ] && [ -n "$reference" ]; then
                show "$kind.$client.${counter}_vs_c" "$(awk -v a="${figures[$name]}" -v r="$reference" \
                    'BEGIN { print (r > 0 ? a / r : 0) }')" "%.2f"
            fi
        done
    done
done
difference() {  # difference NAME A B: prints NAME A − B when both are there
    [ -n "${figures[$2]:-}" ] && [ -n "${figures[$3]:-}" ] || return 0
    show "$1" "$(awk -v a="${figures[$2]}" -v b="${figures[$3]}" 'BEGIN { print a - b }')" "%.2f"
}
difference echo.tether_pool.syscalls_over_beast echo.tether_pool.syscalls_per_rt echo.beast.syscalls_per_rt
difference echo.tether_loop.syscalls_over_beast echo.tether_loop.syscalls_per_rt echo.beast.syscalls_per_rt
difference idle.tether.syscalls_over_c idle.tether.syscalls_per_cycle idle.c_epoll.syscalls_per_cycle
difference idle.tether_records_off.syscalls_over_c idle.tether_records_off.syscalls_per_cycle \
    idle.c_epoll.syscalls_per_cycle
