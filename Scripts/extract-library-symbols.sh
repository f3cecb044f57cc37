#!/usr/bin/env bash
# Extracts the public symbol graph of the Defaults module into DIRECTORY, with the symbols of the
# modules it re-exports (`@_exported import` in Sources/Defaults/Exports.swift, read here so that
# the list lives there alone): the library's API as `import Defaults` gives it, which
# swift-docc-plugin's own graph leaves out. build-documentation.sh gives it to the plugin.
#
#     bash Scripts/extract-library-symbols.sh DIRECTORY   # builds the Defaults target first
set -euo pipefail
cd "$(dirname "$0")/.."
output="${1:?usage: extract-library-symbols.sh DIRECTORY}"
mkdir -p "$output"

reexported="$(sed -n 's/^@_exported import \([A-Za-z0-9_]*\)$/\1/p' Sources/Defaults/Exports.swift | paste -sd, -)"
swift build --target Defaults
bin="$(swift build --show-bin-path)"
triple="$(swiftc -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')"
sdk=()
if [ "$(uname)" = Darwin ]; then
    sdk=(-sdk "$(xcrun --show-sdk-path)")
fi
swift-symbolgraph-extract -module-name Defaults -target "$triple" "${sdk[@]}" -I "$bin/Modules" \
    -module-cache-path "$bin/ModuleCache" -minimum-access-level public -emit-extension-block-symbols \
    -skip-inherited-docs -experimental-allowed-reexported-modules="$reexported" -output-dir "$output"
