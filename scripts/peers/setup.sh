# Sourced (from the repository's root) by scripts/bench-peers.sh and scripts/bench-counts.sh: sets up the peers they
# measure Tether beside, on first use, and the bare C client they divide by.
#   peers_setup_picows   picows $picows_version in its own virtual environment (.build/bench-peers-venv); sets
#                        `python` to its interpreter; returns 1, with a warning, when it cannot be installed
#   peers_setup_beast    the Boost.Beast client (scripts/peers/beast_echo_client.cpp, Debian's libboost-dev through
#                        apt-get when missing and root), compiled with g++ -O2 into .build/bench-peers/; sets `beast`;
#                        returns 1, with a warning, when it cannot be built
#   peers_setup_c        the bare C client (scripts/peers/bare_c_client.c), compiled with cc -O2 into
#                        .build/bench-peers/; sets `bare_c`; returns 1, with a warning, when it cannot be built
#   peers_setup_tether   sets `bench` to $TETHER_BENCH (a tether-bench release binary built already: CI builds it in
#                        a scratch path of its own), or builds one with `swift build -c release`
# Warnings go to standard error as "$peers_script: warning: ...".

picows_version=2.3.1

peers_warn() { echo "${peers_script:-peers}: warning: $*" >&2; }

peers_setup_picows() {
    local venv=.build/bench-peers-venv
    local check="import picows, sys; sys.exit(picows.__version__ != '$picows_version')"
    if ! "$venv/bin/python" -c "$check" 2>/dev/null; then
        if ! { python3 -m venv "$venv" >&2 && "$venv/bin/pip" install --quiet "picows==$picows_version" >&2; }; then
            peers_warn "could not install picows $picows_version into $venv"
            return 1
        fi
    fi
    python="$venv/bin/python"
}

# Compiles SOURCE into OUTPUT with the compiler command that follows, when OUTPUT is missing or older.
peers_compile() {
    local source=$1 output=$2
    shift 2
    [ -x "$output" ] && [ ! "$source" -nt "$output" ] && return 0
    mkdir -p "$(dirname "$output")"
    echo "${peers_script:-peers}: compiling $source" >&2
    "$@" -o "$output" "$source" >&2
}

peers_setup_beast() {
    beast=.build/bench-peers/beast_echo_client
    if [ ! -f /usr/include/boost/beast.hpp ]; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            echo "${peers_script:-peers}: installing libboost-dev (Boost.Beast's headers)" >&2
            { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libboost-dev >/dev/null; } \
                >&2 || peers_warn "apt-get install libboost-dev failed"
        else
            peers_warn "Boost.Beast's headers are missing (install libboost-dev as root)"
        fi
    fi
    if [ ! -f /usr/include/boost/beast.hpp ] || ! command -v g++ >/dev/null; then
        peers_warn "no Boost headers or no g++: Beast skipped"
        return 1
    fi
    if ! peers_compile scripts/peers/beast_echo_client.cpp "$beast" g++ -std=c++17 -O2 -pthread; then
        peers_warn "the Beast client did not compile: Beast skipped"
        return 1
    fi
}

peers_setup_tether() {
    if [ -n "${TETHER_BENCH:-}" ]; then
        bench=$TETHER_BENCH
    else
        swift build -c release --product tether-bench >&2
        bench="$(swift build -c release --show-bin-path)/tether-bench"
    fi
}

peers_setup_c() {
    bare_c=.build/bench-peers/bare_c_client
    if ! command -v cc >/dev/null || ! peers_compile scripts/peers/bare_c_client.c "$bare_c" cc -O2; then
        peers_warn "no cc, or the bare C client did not compile: the C reference skipped"
        return 1
    fi
}
