#!/usr/bin/env bash
# Type-checks the Tether module as an Apple platform would see its Apple-only files (NWPathMonitorAdapter,
# UIApplicationLifecycleObserver, the server-trust evaluator), on Linux, against stand-in modules named like Apple's
# (scripts/apple-stand-ins/: Network, UIKit, Security) that declare exactly the API those files use, as Apple's
# documentation gives it. It catches misspelled names and type errors; it cannot prove the files build on Apple
# (the stand-ins are declarations, the target is still Linux). See docs/platforms.md for what is and is not checked.
#
# Needs the debug build of TetherCore, TetherWire and TetherPOSIX (`swift build`); changes nothing in .build.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(swift build --show-bin-path)
if [ ! -d "$bin/Modules" ]; then
    echo "error: no debug build at $bin: run swift build first" >&2
    exit 1
fi
# `package` declarations are shared under the package's name, which SwiftPM takes from the checkout's directory.
# SwiftPM writes its build plan to .build/debug.yaml (the bin path is .build/<triple>/debug); the fallback spells the
# name as SwiftPM does (lower case, '-' as '_': a clone in "ci-fresh" builds as package "ci_fresh").
package_name=$(cat "$bin/../../debug.yaml" "$bin/../debug.yaml" 2>/dev/null \
    | grep -o '"-package-name","[^"]*"' | head -1 | cut -d'"' -f4 || true)
[ -n "$package_name" ] || package_name=$(basename "$PWD" | tr '[:upper:]-' '[:lower:]_')

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/modules"

echo "== stand-ins: Network, UIKit, Security"
for module in Network UIKit Security; do
    swiftc -emit-module -parse-as-library -swift-version 6 -module-name "$module" \
        -emit-module-path "$work/modules/$module.swiftmodule" "scripts/apple-stand-ins/$module.swift"
done

# Every Tether source but the one file that needs Foundation API Linux declares unavailable (the challenge's
# `serverTrust`, `NSURLAuthenticationMethodServerTrust`, `URLCredential(trust:)`), which no stand-in can replace.
unchecked="Sources/Tether/Transport/URLSession/WebSocketTaskDelegateBridge+ServerTrust.swift"
mapfile -t sources < <(find Sources/Tether -name '*.swift' | sort | grep -vxF "$unchecked")
apple_only=$(grep -l "canImport(Network)\|canImport(UIKit)\|canImport(Security)" "${sources[@]}")
echo "== type-check Tether with the stand-ins; Apple-only files now compiled:"
echo "$apple_only" | sed 's/^/   /'

typecheck() {  # typecheck FILE...: the Tether module with FILEs in place of the sources
    swiftc -typecheck -parse-as-library -swift-version 6 -module-name Tether -package-name "$package_name" \
        -I "$work/modules" -I "$bin/Modules" -DSWIFT_PACKAGE \
        -Xcc "-fmodule-map-file=$PWD/Sources/COpenSSL/module.modulemap" \
        -Xcc "-fmodule-map-file=$PWD/Sources/CTetherLinux/module.modulemap" \
        -Xcc "-fmodule-map-file=$PWD/Sources/CZlib/module.modulemap" \
        -module-cache-path "$work/cache" "$@"
}

log="$work/typecheck.log"
if ! typecheck "${sources[@]}" >"$log" 2>&1; then
    cat "$log"
    echo "error: the Apple-only files do not type-check against the stand-ins" >&2
    exit 1
fi
# "'as' test is always true" is the stand-ins' doing: there CFString is String, on Apple a bridged class.
if grep -E "^[^ ]+\.swift:[0-9]+:[0-9]+: warning:" "$log" | grep -v "warning: 'as' test is always true"; then
    echo "error: warnings in the Apple type-check" >&2
    exit 1
fi

# The check must be able to fail: a misspelled Network case in a copy of the adapter is an error.
broken="$work/NWPathMonitorAdapter.swift"
sed 's/case \.wifi: \.wifi/case .wiFi: .wifi/' Sources/Tether/Path/NWPathMonitorAdapter.swift >"$broken"
mapfile -t with_broken < <(printf '%s\n' "${sources[@]}" | grep -v 'Path/NWPathMonitorAdapter.swift$'; echo "$broken")
if typecheck "${with_broken[@]}" >/dev/null 2>&1; then
    echo "error: a misspelled NWInterface case type-checked: the stand-ins are not in use" >&2
    exit 1
fi
echo "== Apple type-check passed ($(echo "$apple_only" | wc -l) Apple-only files; not checked: $unchecked)"
