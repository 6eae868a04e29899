#!/usr/bin/env bash
# Builds what an app would write: a package of its own, outside this one, whose manifest is the README's (the
# `Tether` product for the app target, `TetherTesting` and `TetherTestServer` for its tests), with Tether by path
# instead of by URL. Its code is every ```swift block of README.md and docs/*.md, as the pages show it
# (scripts/user-package/examples.py; the convention is in docs/testing.md, "The examples in these pages"), and a
# read of every `configuration.NAME` the pages mention. It fails when an example does not compile from outside
# (a `package` member, a type not reachable through `import Tether`, a setting that does not exist), naming the
# page and line, or when an app's example imports more than Tether and Foundation.
#
#   scripts/user-package.sh    builds (debug, tests too) in .build/user-package, which later runs reuse
#
# No network: the only dependency is this checkout, and nothing is run.
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
