#!/bin/sh
# Renders tether-report.html with headless Chromium and saves a PNG, to check that the report reads well.
# usage: scripts/report-screenshot.sh [REPORT_HTML] [OUT_PNG]
# Defaults: ./tether-report.html (run `swift run tether check` first) and /tmp/report.png.
set -eu
report="${1:-tether-report.html}"
out="${2:-/tmp/report.png}"
if [ ! -f "$report" ]; then
    echo "no report at $report; run 'swift run tether check' first" >&2
    exit 2
fi
if ! command -v chromium >/dev/null 2>&1; then
    echo "installing chromium (Debian package)..." >&2
    apt-get update && apt-get install -y chromium
fi
absolute="$(cd "$(dirname "$report")" && pwd)/$(basename "$report")"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --screenshot="$out" --window-size="${WINDOW_SIZE:-1400,2000}" "file://$absolute" 2>/dev/null
echo "$out"
