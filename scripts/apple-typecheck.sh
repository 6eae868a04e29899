#!/usr/bin/env bash
# Type-checks every source file an Apple build of Tether's library products compiles, on Linux, against stand-ins of
# Apple's declarations (scripts/apple-stand-ins/), then checks that reintroduced errors fail it. The work is done by
# scripts/apple-typecheck.py (python3, standard library only), whose docstring says how; docs/platforms.md says what
# it checks and what it cannot. Options: --no-self-test, --self-test, --verbose, --keep.
set -euo pipefail
exec python3 "$(dirname "$0")/apple-typecheck.py" "$@"
