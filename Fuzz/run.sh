#!/usr/bin/env bash
# Builds the property-list fuzzer with libFuzzer and AddressSanitizer and runs it.
#
#   bash Fuzz/run.sh [seconds]     (default 60)
#
# Crashing inputs are saved under Fuzz/artifacts/; the corpus grows in Fuzz/corpus/.
set -euo pipefail

seconds="${1:-60}"
fuzz_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$fuzz_dir")"
bin="$fuzz_dir/bin"
corpus="$fuzz_dir/corpus"
artifacts="$fuzz_dir/artifacts"
mkdir -p "$bin" "$corpus" "$artifacts"

echo "building the fuzzer..."
# `-package-name`: the module has `package` declarations, as SwiftPM builds it.
swiftc -sanitize=fuzzer,address -parse-as-library -O \
    -module-name DefaultsPropertyList -package-name swift_defaults \
    "$root"/Sources/DefaultsPropertyList/*.swift "$fuzz_dir/PropertyListFuzzer.swift" \
    -o "$bin/PropertyListFuzzer"

if [ -z "$(ls -A "$corpus")" ]; then
    echo "generating the seed corpus..."
    swiftc -O -parse-as-library "$fuzz_dir/SeedCorpus.swift" -o "$bin/seed-corpus"
    "$bin/seed-corpus" "$corpus"
fi

echo "fuzzing for $seconds seconds..."
# Swift's own crash backtracer would get in the way of AddressSanitizer's report.
export SWIFT_BACKTRACE=enable=no
exec "$bin/PropertyListFuzzer" "$corpus" \
    -dict="$fuzz_dir/plist.dict" \
    -max_total_time="$seconds" \
    -timeout=5 \
    -max_len=16384 \
    -artifact_prefix="$artifacts/" \
    -print_final_stats=1
