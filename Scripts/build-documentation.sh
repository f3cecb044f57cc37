#!/usr/bin/env bash
# Builds every DocC catalog (Sources/<module>/<module>.docc) with swift-docc-plugin, warnings
# treated as errors, so that every symbol link (``Symbol``), article link (<doc:Article>) and
# documented parameter stays valid. The archives are in .build/plugins/Swift-DocC/outputs/; the
# log in .build-docs.log. `.ci/run` runs it after the build.
set -euo pipefail
cd "$(dirname "$0")/.."

modules=()
others=()
for catalog in Sources/*/*.docc; do
    module="$(basename "$(dirname "$catalog")")"
    modules+=("$module")
    # Defaults is built on its own, below.
    [ "$module" = Defaults ] || others+=(--target "$module")
done

failed() {
    grep -E -B2 -A12 "(^|: )(error|warning):" .build-docs.log | head -200 || true
    echo "error: the documentation has warnings or broken links, or did not build (full log: .build-docs.log)" >&2
    exit 1
}

: > .build-docs.log
swift package generate-documentation "${others[@]}" --warnings-as-errors >> .build-docs.log 2>&1 || failed

# Defaults re-exports DefaultsStorage and DefaultsSync (`@_exported import`: the suites and the
# sync stores' types are Defaults' API), whose symbols swift-docc-plugin leaves out of the symbol
# graph it extracts. So Defaults' graph is extracted with them (extract-library-symbols.sh) and
# given to the plugin in the place of its own.
graph="$(mktemp -d)"
trap 'rm -rf "$graph"' EXIT
bash Scripts/extract-library-symbols.sh "$graph" >> .build-docs.log 2>&1 || failed
swift package generate-documentation --target Defaults --additional-symbol-graph-dir "$graph" \
    --warnings-as-errors >> .build-docs.log 2>&1 || failed

echo "documentation of ${modules[*]} built"
