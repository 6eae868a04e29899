#!/usr/bin/env bash
# Counts the public declarations of each library module, from the symbol graphs the compiler extracts
# (swift-symbolgraph-extract, public and open only: `package` and internal declarations are not counted, nor the
# members the compiler synthesizes). A declaration is a symbol: a type, a case, a property, a method, an
# initializer, a subscript, an operator. Extensions of other modules' types count where they are declared.
#
#   scripts/public-api.sh             builds (debug), then prints `module count` lines
#   scripts/public-api.sh --list M    prints module M's public symbols, one per line (kind and path)
#   SKIP_BUILD=1 scripts/public-api.sh  uses the existing debug build
set -euo pipefail
cd "$(dirname "$0")/.."

modules=(TetherCore TetherWire TetherPOSIX Tether TetherTesting TetherTestServer TetherCLI)
list=""
if [[ "${1:-}" == "--list" ]]; then
    list="${2:?--list needs a module name}"
    modules=("$list")
fi

if [[ -z "${SKIP_BUILD:-}" ]]; then
    swift build >&2
fi
bin=$(swift build --show-bin-path)
triple=$(swift -print-target-info | jq -r .target.triple)
sdk_flags=()
if [[ "$(uname)" == "Darwin" ]]; then
    sdk_flags=(-sdk "$(xcrun --show-sdk-path)")
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for module in "${modules[@]}"; do
    if [[ ! -e "$bin/Modules/$module.swiftmodule" ]]; then
        echo "$module (not built)"
        continue
    fi
    mkdir -p "$out/$module"
    # The C modules' maps are found next to their headers (TetherWire imports CZlib; TetherPOSIX and Tether the
    # Linux and OpenSSL ones).
    swift-symbolgraph-extract \
        -module-name "$module" -target "$triple" "${sdk_flags[@]}" \
        -I "$bin/Modules" -I "$bin" -I Sources/CTetherLinux -I Sources/COpenSSL -I Sources/CZlib \
        -minimum-access-level public -skip-synthesized-members \
        -output-dir "$out/$module" >/dev/null
    symbols='[.symbols[] | select(.accessLevel == "public" or .accessLevel == "open")]'
    if [[ -n "$list" ]]; then
        jq -r "$symbols | .[] | \"\(.kind.identifier)\t\(.pathComponents | join(\".\"))\"" "$out/$module"/*.symbols.json |
            sort
    else
        count=$(jq -s "map($symbols | length) | add" "$out/$module"/*.symbols.json)
        echo "$module $count"
    fi
done
