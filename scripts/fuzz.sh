#!/usr/bin/env bash
# Fuzzes TetherWire with libFuzzer: `scripts/fuzz.sh SECONDS` builds each target under Fuzz/ with
# -sanitize=fuzzer,address and runs it for SECONDS seconds (default 60), starting from Fuzz/corpus/<target>/.
# Exits non-zero on a crash, a sanitizer report or a timeout (an input running over 10 s); the input is saved
# as .build/fuzz/<target>-crash-* (or -timeout-*, -leak-*). New corpus entries go to .build/fuzz/corpus-<target>/.
set -euo pipefail
seconds="${1:-60}"
cd "$(dirname "$0")/.."

out=.build/fuzz
mkdir -p "$out"
mapfile -t sources < <(find Sources/TetherWire -name '*.swift' | sort)
linker=()
if command -v ld.lld >/dev/null 2>&1 || [ -x "$(dirname "$(command -v swiftc)")/ld.lld" ]; then
    linker=(-use-ld=lld)
fi

for target in decoder handshake inflate; do
    case "$target" in
        decoder) entry=Fuzz/DecoderFuzz.swift ;;
        handshake) entry=Fuzz/HandshakeFuzz.swift ;;
        inflate) entry=Fuzz/InflateFuzz.swift ;;
    esac
    echo "== fuzz: building $target"
    swiftc -sanitize=fuzzer,address -parse-as-library -O -g "${linker[@]}" -module-name TetherWireFuzz -package-name Tether -I Sources/CZlib \
        "${sources[@]}" Fuzz/FuzzRandom.swift "$entry" -o "$out/$target" 2>&1 | { grep -v "Cannot export local symbol" || true; }
    test -x "$out/$target"
    mkdir -p "$out/corpus-$target"
    echo "== fuzz: running $target for ${seconds}s"
    "$out/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
        -artifact_prefix="$out/$target-" "$out/corpus-$target" "Fuzz/corpus/$target"
done
echo "== fuzz: no findings"
