#!/usr/bin/env bash
# Shows that the reports scripts/tsan-suppressions.txt suppresses are ThreadSanitizer's limitations on this
# toolchain, not races: each program in scripts/tsan-limitations/ does only what the language orders (a
# continuation's hand-off, a contended Mutex), and TSan still reports a race in it. Exits 1 when a program no
# longer makes TSan report: the toolchain then sees that hand-off, and its suppressions should go.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for program in scripts/tsan-limitations/*.swift; do
    name=$(basename "$program" .swift)
    swiftc -sanitize=thread -parse-as-library -Onone "$program" -o "$work/$name"
    reports=$(TSAN_OPTIONS="halt_on_error=0 exitcode=0" "$work/$name" 2>&1 | grep -c "^WARNING: ThreadSanitizer" || true)
    if [ "$reports" -gt 0 ]; then
        echo "tsan limitation still there: $name ($reports reports from a program without a race)"
    else
        echo "tsan limitation gone: $name makes no report; remove its suppressions from scripts/tsan-suppressions.txt"
        status=1
    fi
done
exit $status
