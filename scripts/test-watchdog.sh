#!/usr/bin/env bash
# Runs a test command with a time limit, so that a test that never ends fails the run instead of CI's own limit.
#
#   scripts/test-watchdog.sh SECONDS COMMAND [ARGUMENTS...]
#
# The command's output passes through as it comes. When it runs past SECONDS, the watchdog names every Swift
# Testing test that started and has not ended (the one that hangs is among them), stops the command and everything
# it started, and exits 124 (like timeout(1)). Otherwise it exits with the command's status.
set -uo pipefail

if [ $# -lt 2 ]; then
    echo "usage: $0 SECONDS COMMAND [ARGUMENTS...]" >&2
    exit 2
fi
limit=$1
shift

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# The command in a session of its own (setsid), so that stopping it stops everything it started: `swift test` puts
# the test process into a process group of its own, but not into another session. Line-buffered (stdbuf): the test
# process writes to a pipe here, and block-buffered output would be lost, and the hung test unnamed, when it is killed.
setsid stdbuf -oL -eL "$@" > >(tee "$log") 2>&1 &
pid=$!

waited=0
while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge "$limit" ]; then
        echo
        echo "error: still running after ${limit} s; tests started and not ended:" >&2
        # "◇ Test name(labels:) started." opens a test; "✔ Test name(labels:) … passed after", "✘ … failed after"
        # or "➜ … skipped" ends it ("✘ Test … recorded an issue" does not). Test cases of parameterized tests
        # ("◇ Test case passing …") are left out: their test ends after them.
        # Colours (a terminal, or a test binary run directly) are taken out first.
        sed 's/\x1b\[[0-9;]*m//g' "$log" > "$log.plain"
        sed -n 's/^.*◇ Test \([^ ]*([^)]*)\) started\.$/\1/p' "$log.plain" | sort -u > "$log.started"
        sed -n 's/^.*\(✔\|✘\|➜\) Test \([^ ]*([^)]*)\) .*\(passed after\|failed after\|skipped\).*/\2/p' \
            "$log.plain" | sort -u > "$log.ended"
        comm -23 "$log.started" "$log.ended" | sed 's/^/  /' >&2
        rm -f "$log.plain" "$log.started" "$log.ended"
        pkill -TERM -s "$pid" 2>/dev/null
        sleep 5
        pkill -KILL -s "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        exit 124
    fi
    sleep 1
    waited=$((waited + 1))
done
wait "$pid"
