#!/usr/bin/env bash
# Fuzzes TetherWire with libFuzzer: `scripts/fuzz.sh SECONDS` builds the targets under Fuzz/ into one binary with
# -sanitize=fuzzer,address and runs each (TETHER_FUZZ_TARGET=<target>) for SECONDS seconds (default 60), starting
# from Fuzz/corpus/<target>/.
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

# One binary for every target (Fuzz/FuzzMain.swift dispatches on TETHER_FUZZ_TARGET): one build of TetherWire with
# the sanitizers instead of one per target.
echo "== fuzz: building"
swiftc -sanitize=fuzzer,address -parse-as-library -O -g "${linker[@]}" -module-name TetherWireFuzz -package-name Tether \
    -I Sources/CZlib "${sources[@]}" Fuzz/*.swift -o "$out/tether-fuzz" 2>&1 | { grep -v "Cannot export local symbol" || true; }
test -x "$out/tether-fuzz"
for target in decoder handshake inflate; do
    mkdir -p "$out/corpus-$target"
    echo "== fuzz: running $target for ${seconds}s"
    TETHER_FUZZ_TARGET=$target "$out/tether-fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len=4096 -print_final_stats=1 -artifact_prefix="$out/$target-" "$out/corpus-$target" "Fuzz/corpus/$target"
done
echo "== fuzz: no findings"
