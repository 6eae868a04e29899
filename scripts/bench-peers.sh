#!/usr/bin/env bash
# Tether's client side by side with the fastest peers, as a user choosing a client would try them: one echo server
# (picows's, pinned to CPU 1), each client pinned to CPU 0 in turn, alternating rounds, medians.
#   picows 2.3.1   Python over C, driven from its frame callback      (scripts/peers/picows_echo.py client)
#   Boost.Beast    C++, Debian's libboost-dev, a synchronous stream    (scripts/peers/beast_echo_client.cpp)
#   Tether         `tether-bench echo --url URL --layer client`
# Each client measures what `tether-bench echo` measures, the same way: sequential 64-byte binary round trips per
# second after a warm-up, and 1 MiB binary echoes as payload MB/s one way (10^6 bytes).
#
#   scripts/bench-peers.sh [ROUNDS [SECONDS]]    (default 3 rounds of 2.5 s per figure; with CI=true, 1 s)
#   TETHER_BENCH=PATH uses that tether-bench release binary instead of building one with `swift build -c release`.
#   TETHER_BENCH_BEFORE=PATH adds another tether-bench binary (the code before a change) to every rotation, so that a
#                        change is judged by same-run ratios: its figures are `tether_before.*`, and
#                        `echo.after_over_before_*` divides the first binary's medians by its.
#
# Prints, as `name value` lines, each client's medians over the rounds:
#   peers.picows.rtt_64b_per_s  peers.picows.mbps_1m
#   peers.beast.rtt_64b_per_s   peers.beast.mbps_1m
#   peers.tether.rtt_64b_per_s (consumer on the global pool, the default)
#   peers.tether.rtt_64b_loop_consumer_per_s (consumer on `client.eventExecutor`, the event loop)
#   peers.tether.loop_consumer_work_per_rt (jobs the loop ran per round trip in that loop: 1 is the consumer's own)
#   peers.tether.mbps_1m
# and Tether's median divided by the peer's median:
#   echo.vs_picows_64b   pool consumer / picows      echo.vs_picows_64b_loop_consumer   loop consumer / picows
#   echo.vs_beast_64b    loop consumer / Beast       echo.vs_beast_64b_pool_consumer    pool consumer / Beast
#   echo.vs_picows_1m    echo.vs_beast_1m
# and over TLS (when `openssl` is there: picows's server with a certificate of a CA made for the run, picows's client
# and `tether-bench echo --url wss://… --ca-file CA` trusting it, alternating rounds as above):
#   peers.picows.tls_rtt_64b_per_s  peers.picows.tls_mbps_1m  peers.tether.tls_rtt_64b_per_s  peers.tether.tls_mbps_1m
#   echo.vs_picows_tls_64b   echo.vs_picows_tls_1m
#   with TETHER_BENCH_BEFORE, also peers.tether_before.* and echo.after_over_before_64b,
#   echo.after_over_before_64b_loop_consumer, echo.after_over_before_1m, echo.after_over_before_tls_64b,
#   echo.after_over_before_tls_1m
# (The targets compare the pool consumer with picows and the loop consumer with Beast.) Each round's figures go to
# standard error as they come. The round's client order rotates, so no client always runs first.
#
# Sets itself up on first use: picows in its own virtual environment (.build/bench-peers-venv), libboost-dev through
# apt-get when missing (as root), the Beast client compiled with g++ -O2 into .build/bench-peers/. A peer that
# cannot be set up is skipped with a warning (without picows, there is no server and nothing is measured): the
# comparison is optional, CI prints it and never fails on it.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
if [ "${CI:-}" = true ]; then seconds="${2:-1}"; else seconds="${2:-2.5}"; fi
case "$rounds" in '' | *[!0-9]* | 0) echo "usage: $0 [ROUNDS [SECONDS]]" >&2; exit 2 ;; esac

peers_script=bench-peers
# shellcheck source=scripts/peers/setup.sh
source scripts/peers/setup.sh
warn() { peers_warn "$@"; }

# picows (pinned to the version the comparison was first made with) and Boost.Beast (header-only, from Debian's
# libboost-dev).
if ! peers_setup_picows; then
    warn "no picows: no echo server, nothing measured"
    exit 0
fi
have_beast=1
peers_setup_beast || have_beast=0

peers_setup_tether

# Client on CPU 0, server on CPU 1, as in the issue's measurement; unpinned where that is impossible.
server_pin=() client_pin=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    server_pin=(taskset -c 1) client_pin=(taskset -c 0)
else
    warn "fewer than 2 CPUs or no taskset: client and server not pinned"
fi

# The server prints `picows.serve_url URL` once it listens; it stops when its standard input (this script's end of
# the coprocess pipe) closes, so it never outlives the script.
coproc server { exec "${server_pin[@]}" "$python" scripts/peers/picows_echo.py serve; }
server_pid=$server_PID
server_in=${server[1]}
results=$(mktemp)
tls_dir=$(mktemp -d)
tls_server_pid=""
# Runs on exit under `set -e`: every command here must succeed, or the script fails after printing everything (a
# server that already stopped on its standard input's end cannot be killed).
cleanup() {
    exec {server_in}>&-
    kill "$server_pid" 2>/dev/null || true
    if [ -n "$tls_server_pid" ]; then kill "$tls_server_pid" 2>/dev/null || true; fi
    rm -rf "$results" "$tls_dir"
}
trap cleanup EXIT
read -r _ url <&"${server[0]}"
port=${url#ws://127.0.0.1:}
port=${port%/}
echo "bench-peers: picows $picows_version echo server at $url; $rounds rounds of $seconds s per figure" >&2

before=${TETHER_BENCH_BEFORE:-}
tether_binary() {  # tether_binary tether|tether_before: the binary that client runs
    if [ "$1" = tether_before ]; then echo "$before"; else echo "$bench"; fi
}
run_client() {  # run_client NAME: appends its `NAME.figure value` lines to $results
    case "$1" in
    picows) "${client_pin[@]}" "$python" scripts/peers/picows_echo.py client "$url" "$seconds" ;;
    beast) "${client_pin[@]}" "$beast" 127.0.0.1 "$port" / "$seconds" ;;
    tether | tether_before)
        # tether-bench's progress lines go to standard error; its figures become `tether.*` (`tether_before.*`).
        "${client_pin[@]}" "$(tether_binary "$1")" echo --url "$url" --layer client --seconds "$seconds" \
            --only rtt_64b_per_s,rtt_64b_loop_consumer_per_s,mbps_1m 2>/dev/null | sed "s/^echo\./$1./"
        ;;
    picows_tls)
        "${client_pin[@]}" "$python" scripts/peers/picows_echo.py client "$tls_url" "$seconds" "$tls_dir/ca.pem" \
            | sed 's/^picows\./picows.tls_/'
        ;;
    tether_tls | tether_before_tls)
        "${client_pin[@]}" "$(tether_binary "${1%_tls}")" echo --url "$tls_url" --ca-file "$tls_dir/ca.pem" \
            --layer client --seconds "$seconds" --only rtt_64b_per_s,mbps_1m 2>/dev/null \
            | sed "s/^echo\./${1%_tls}.tls_/"
        ;;
    esac | tee -a "$results" | sed "s/^/bench-peers: round $round: /" >&2
}

clients=(picows tether)
[ "$have_beast" = 1 ] && clients=(picows beast tether)
[ -n "$before" ] && clients+=(tether_before)
for ((round = 1; round <= rounds; round++)); do
    for ((i = 0; i < ${#clients[@]}; i++)); do
        run_client "${clients[(i + round - 1) % ${#clients[@]}]}"
    done
done

# Over TLS: a CA and a certificate for 127.0.0.1 made here (the extensions Python's strict verification asks for),
# picows's server with it (stopped when its standard input, this script's descriptor, closes), both clients trusting
# the CA. Without openssl, or when the server does not come up, skipped with a warning.
make_tls_certificates() {
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=bench-peers CA" \
        -keyout "$tls_dir/ca.key" -out "$tls_dir/ca.pem" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" &&
        openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
            -keyout "$tls_dir/server.key" -out "$tls_dir/server.csr" &&
        printf '%s\n' "subjectAltName=IP:127.0.0.1" "basicConstraints=CA:FALSE" \
            "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" \
            "subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid" > "$tls_dir/server.ext" &&
        openssl x509 -req -days 2 -in "$tls_dir/server.csr" -CA "$tls_dir/ca.pem" -CAkey "$tls_dir/ca.key" \
            -CAcreateserial -extfile "$tls_dir/server.ext" -out "$tls_dir/server.pem"
}
tls_url=""
if ! command -v openssl >/dev/null; then
    warn "no openssl: the TLS comparison skipped"
elif ! make_tls_certificates 2>/dev/null; then
    warn "openssl could not make the certificates: the TLS comparison skipped"
else
    exec {tls_in}> >(exec "${server_pin[@]}" "$python" scripts/peers/picows_echo.py serve \
        "$tls_dir/server.pem" "$tls_dir/server.key" > "$tls_dir/url")
    tls_server_pid=$!
    # A bounded wait for the server's one line (it prints it once it listens).
    for _ in $(seq 100); do
        [ -s "$tls_dir/url" ] && break
        sleep 0.1
    done
    read -r _ tls_url < "$tls_dir/url" || true
    if [ -z "$tls_url" ]; then
        warn "picows's TLS server did not start: the TLS comparison skipped"
    else
        echo "bench-peers: picows TLS echo server at $tls_url" >&2
        tls_clients=(picows_tls tether_tls)
        [ -n "$before" ] && tls_clients+=(tether_before_tls)
        for ((round = 1; round <= rounds; round++)); do
            for ((i = 0; i < ${#tls_clients[@]}; i++)); do
                run_client "${tls_clients[(i + round - 1) % ${#tls_clients[@]}]}"
            done
        done
    fi
    exec {tls_in}>&-
fi

"$python" - "$results" <<'PY'
import statistics
import sys

figures = {}
for line in open(sys.argv[1]):
    name, value = line.split()
    figures.setdefault(name, []).append(float(value))
medians = {name: statistics.median(values) for name, values in figures.items()}


def show(name, value):
    print(f"{name} {value:.0f}" if name.endswith("_per_s") else f"{name} {value:.2f}")


for name in sorted(medians):
    show("peers." + name, medians[name])

ratios = [
    ("echo.vs_picows_64b", "tether.rtt_64b_per_s", "picows.rtt_64b_per_s"),
    ("echo.vs_picows_64b_loop_consumer", "tether.rtt_64b_loop_consumer_per_s", "picows.rtt_64b_per_s"),
    ("echo.vs_picows_1m", "tether.mbps_1m", "picows.mbps_1m"),
    ("echo.vs_beast_64b", "tether.rtt_64b_loop_consumer_per_s", "beast.rtt_64b_per_s"),
    ("echo.vs_beast_64b_pool_consumer", "tether.rtt_64b_per_s", "beast.rtt_64b_per_s"),
    ("echo.vs_beast_1m", "tether.mbps_1m", "beast.mbps_1m"),
    ("echo.vs_picows_tls_64b", "tether.tls_rtt_64b_per_s", "picows.tls_rtt_64b_per_s"),
    ("echo.vs_picows_tls_1m", "tether.tls_mbps_1m", "picows.tls_mbps_1m"),
    ("echo.after_over_before_64b", "tether.rtt_64b_per_s", "tether_before.rtt_64b_per_s"),
    ("echo.after_over_before_64b_loop_consumer", "tether.rtt_64b_loop_consumer_per_s",
     "tether_before.rtt_64b_loop_consumer_per_s"),
    ("echo.after_over_before_1m", "tether.mbps_1m", "tether_before.mbps_1m"),
    ("echo.after_over_before_tls_64b", "tether.tls_rtt_64b_per_s", "tether_before.tls_rtt_64b_per_s"),
    ("echo.after_over_before_tls_1m", "tether.tls_mbps_1m", "tether_before.tls_mbps_1m"),
]
for name, ours, theirs in ratios:
    if ours in medians and theirs in medians:
        print(f"{name} {medians[ours] / medians[theirs]:.2f}")
PY
