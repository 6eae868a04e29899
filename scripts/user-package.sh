#!/usr/bin/env bash
# Builds what an app would write: a package of its own, outside this one, whose manifest is the README's (the
# `Tether` product for the app target, `TetherTesting` and `TetherTestServer` for its tests), with Tether by path
# instead of by URL. Its code is every ```swift block of README.md and docs/*.md, as the pages show it
# (scripts/user-package/examples.py; the convention is in docs/testing.md, "The examples in these pages"), and a
# read of every `configuration.NAME` the pages mention. It fails when an example does not compile from outside
# (a `package` member, a type not reachable through `import Tether`, a setting that does not exist), naming the
# page and line, or when an app's example imports more than Tether and Foundation. Then it runs each program a page
# gives whole (a `main` example: the README's first program) as a new user does, against `tether serve --port 8080`
# built from this checkout (scripts/user-package/run-main.py): it fails unless the program exits 0 within a bound and
# prints what the page shows it printing. If port 8080 is taken it says so and uses a free port, rewriting only the
# port in the program's URL.
#
#   scripts/user-package.sh    builds (debug, tests too) in .build/user-package, which later runs reuse
#
# No network beyond loopback: the only dependency is this checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work="$root/.build/user-package"
package="$work/TetherUser"
mkdir -p "$package"

# The README's manifest names the package `tether` (its URL's last component); a path dependency takes its
# identity from the directory's name, so the checkout is reached through a link of that name.
ln -sfn "$root" "$work/tether"

python3 scripts/user-package/examples.py "$root" "$package" "$work/tether"
log=$(mktemp)
if ! swift build --build-tests --package-path "$package" --scratch-path "$work/build" >"$log" 2>&1; then
    grep -E "^[^ ].*error:" "$log" | awk '!seen[$0]++' | head -n 40 >&2 || tail -n 40 "$log" >&2
    rm -f "$log"
    echo "error: the pages' examples do not build from a package outside Tether (scripts/user-package.sh)" >&2
    exit 1
fi
tail -n 1 "$log"
rm -f "$log"
echo "user-package: a package that depends on Tether as an app does builds every example of the pages"

# The server the pages tell a new user to start: this checkout's `tether` (already built in CI: then this is quick).
if ! swift build --product tether >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    rm -f "$log"
    echo "error: tether does not build (scripts/user-package.sh)" >&2
    exit 1
fi
rm -f "$log"
python3 scripts/user-package/run-main.py "$package" "$work/build" "$(swift build --show-bin-path)/tether"
