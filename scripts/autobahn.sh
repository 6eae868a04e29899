#!/usr/bin/env bash
# Autobahn|Testsuite against Tether, cases 1-11 and a subset of 12.* and 13.* (permessage-deflate, RFC 7692):
#   - the client, as two agents: `tether-transport` (SocketTransport directly) and `tether-client` (WebSocketClient);
#     for 12.* and 13.* each offers what the case's description lists (tether-autobahn asks getCaseInfo);
#   - the client over wss:// as two more, `tether-transport-tls` and `tether-client-tls`, against a second
#     fuzzingserver that serves TLS with a certificate from a throw-away CA made here with the openssl command
#     (cases 1-10; the compression cases run over TLS with --full-compression);
#   - the test server, `tether serve --echo --deflate`, under the suite's fuzzingclient.
# Prints the counts per outcome and every case that is not OK, and exits 1 on any FAILED, WRONG CODE, UNCLEAN or
# UNIMPLEMENTED outcome, or a NON-STRICT one outside the allowed group (scripts/autobahn/verdict.py).
#
# Installs the suite on first use (scripts/autobahn/setup.sh: Python 2.7 from pyenv, packages from the registry)
# under $AUTOBAHN_HOME (default ~/.cache/autobahn). Reports go to $AUTOBAHN_REPORTS (default: a temporary folder).
# Uses the debug build (`swift build`), or the release one with CONFIGURATION=release.
#
# --full-compression runs every case of 12.* and 13.* instead of the subset below.
# --with-python also runs a reference testee written with Python's `websockets` (scripts/autobahn/websockets_testee.py,
# from the interop venv that scripts/interop.sh makes) against the same fuzzingserver, reported beside Tether's
# agents but not judged by the rule.
set -euo pipefail
with_python=0
# The compression cases send 1,000 messages each (up to 128 KiB, in up to 4,096 fragments), one round trip at a
# time, compressed and inflated by the suite's Python: about 1 s per case for small messages and far more for the
# large ones, for each of the five agents. By default a subset runs that covers every group, 12.* (five kinds of
# data) and 13.* (seven combinations of offers and answers: context takeover and windows of 9 and 15 bits on either
# side): cases 1 and 5 of each (16-byte and 4 KiB messages), and case 11 (8 KiB messages in 256-byte fragments) of
# 12.1 and 13.7, 26 cases. --full-compression runs all 216.
excluded=$(python3 -c 'import json; print(json.dumps(
    ["%d.*.%d" % (group, case) for group in (12, 13) for case in [2, 3, 4] + list(range(6, 11)) + list(range(12, 19))]
    + ["%d.%d.11" % (group, sub) for group, subs in ((12, range(1, 6)), (13, range(1, 8))) for sub in subs
       if (group, sub) not in ((12, 1), (13, 7))]))')
for argument in "$@"; do
    case "$argument" in
    --with-python) with_python=1 ;;
    --full-compression) excluded='[]' ;;
    *) echo "usage: $0 [--with-python] [--full-compression]" >&2; exit 2 ;;
    esac
done
cd "$(dirname "$0")/.."
root=$(pwd)
export AUTOBAHN_HOME=${AUTOBAHN_HOME:-$HOME/.cache/autobahn}
configuration=${CONFIGURATION:-debug}
reports=${AUTOBAHN_REPORTS:-$(mktemp -d)}
mkdir -p "$reports"

if ! "$AUTOBAHN_HOME/venv27/bin/python" -c 'import autobahntestsuite, wsaccel' 2>/dev/null; then
    echo "== installing Autobahn|Testsuite into $AUTOBAHN_HOME (log: $reports/setup.log)"
    bash scripts/autobahn/setup.sh >"$reports/setup.log" 2>&1 || { tail -40 "$reports/setup.log"; exit 1; }
fi
wstest=("$AUTOBAHN_HOME/venv27/bin/python" "$AUTOBAHN_HOME/wstest_loopback.py")

swift build -c "$configuration" --product tether-autobahn
swift build -c "$configuration" --product tether
bin=$(swift build -c "$configuration" --show-bin-path)

pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# waits_for_listener PORT PID LOG: until something listens on 127.0.0.1:PORT (30 s at most)
wait_for_listener() {
    local deadline=$((SECONDS + 30))
    until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
        kill -0 "$2" 2>/dev/null || { echo "error: the server exited; its log:" >&2; cat "$3" >&2; exit 1; }
        ((SECONDS < deadline)) || { echo "error: nothing listens on port $1 after 30 s" >&2; exit 1; }
        sleep 0.2
    done
}

echo "== client cases (fuzzingserver)"
port=$(free_port)
cat >"$reports/fuzzingserver.json" <<JSON
{"url": "ws://127.0.0.1:$port", "outdir": "$reports/clients",
 "cases": ["*"], "exclude-cases": $excluded, "exclude-agent-cases": {}}
JSON
(cd "$reports" && exec "${wstest[@]}" -m fuzzingserver -s "$reports/fuzzingserver.json" -u 0) \
    >"$reports/fuzzingserver.log" 2>&1 &
pids+=($!)
wait_for_listener "$port" "${pids[-1]}" "$reports/fuzzingserver.log"
for via in transport client; do
    "$bin/tether-autobahn" --url "ws://127.0.0.1:$port" --agent "tether-$via" --via "$via"
done
if [ "$with_python" = 1 ]; then
    python="${TETHER_INTEROP_VENV:-$HOME/.cache/tether-interop/venv}/bin/python"
    [ -x "$python" ] || { echo "error: no interop venv at $python: run scripts/interop.sh first" >&2; exit 1; }
    echo "reference: python-websockets ($("$python" -c 'import websockets; print(websockets.__version__)'))"
    "$python" scripts/autobahn/websockets_testee.py "ws://127.0.0.1:$port" python-websockets
fi

echo "== client cases over wss:// (a fuzzingserver with a key and a certificate)"
tls="$reports/tls"
mkdir -p "$tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tls/ca.key" -out "$tls/ca.pem" \
    -subj "/CN=Tether Autobahn CA" -days 2 -addext basicConstraints=critical,CA:TRUE \
    -addext keyUsage=critical,keyCertSign 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tls/server.key" \
    -out "$tls/server.csr" -subj "/CN=127.0.0.1" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >"$tls/server.ext"
openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -set_serial 2 -days 2 \
    -extfile "$tls/server.ext" -out "$tls/server.pem" 2>/dev/null
# Over TLS, cases 1-10: what TLS changes is the byte stream under the engine, and every framing, fragmentation,
# control-frame, UTF-8, close and large-message case crosses it. The compression cases (12.*, 13.*) exercise the
# engine's deflate and inflate, which do not depend on the stream under them; they run on the plain agents above
# and the server (about 40 s per TLS agent saved; --full-compression runs them over TLS too).
tls_excluded=$excluded
if [ "$excluded" != '[]' ]; then tls_excluded='["12.*", "13.*"]'; fi
port=$(free_port)
cat >"$reports/fuzzingserver-tls.json" <<JSON
{"url": "wss://127.0.0.1:$port", "key": "$tls/server.key", "cert": "$tls/server.pem", "outdir": "$reports/clients-tls",
 "cases": ["*"], "exclude-cases": $tls_excluded, "exclude-agent-cases": {}}
JSON
(cd "$reports" && exec "${wstest[@]}" -m fuzzingserver -s "$reports/fuzzingserver-tls.json" -u 0) \
    >"$reports/fuzzingserver-tls.log" 2>&1 &
pids+=($!)
wait_for_listener "$port" "${pids[-1]}" "$reports/fuzzingserver-tls.log"
for via in transport client; do
    "$bin/tether-autobahn" --url "wss://127.0.0.1:$port" --ca-file "$tls/ca.pem" --agent "tether-$via-tls" --via "$via"
done

echo "== server cases (fuzzingclient against tether serve --echo --deflate)"
port=$(free_port)
"$bin/tether" serve --echo --deflate --port "$port" >"$reports/serve.log" 2>&1 &
pids+=($!)
wait_for_listener "$port" "${pids[-1]}" "$reports/serve.log"
cat >"$reports/fuzzingclient.json" <<JSON
{"outdir": "$reports/servers", "servers": [{"agent": "tether-serve", "url": "ws://127.0.0.1:$port"}],
 "cases": ["*"], "exclude-cases": $excluded, "exclude-agent-cases": {}}
JSON
(cd "$reports" && "${wstest[@]}" -m fuzzingclient -s "$reports/fuzzingclient.json") \
    >"$reports/fuzzingclient.log" 2>&1 || { tail -20 "$reports/fuzzingclient.log"; exit 1; }

echo "== verdict (reports in $reports)"
python3 "$root/scripts/autobahn/verdict.py" "$reports/clients/index.json" "$reports/clients-tls/index.json" \
    "$reports/servers/index.json"
