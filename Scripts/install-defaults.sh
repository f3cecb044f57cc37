#!/usr/bin/env bash
# Installs the `defaults` command for the current user: the binary in ~/.local/bin (with
# `defaults-edit-server`, which `defaults edit` runs from beside it), its manual
# page (made from the command's argument-parser definitions by swift-argument-parser's
# generate-manual tool) in ~/.local/share/man/man1, and completions for bash, zsh and fish.
#
#     bash Scripts/install-defaults.sh                 # into ~/.local
#     PREFIX=/usr/local bash Scripts/install-defaults.sh
#
# CONFIGURATION=debug installs a debug build (CI uses it, after its debug build).
set -euo pipefail
cd "$(dirname "$0")/.."

prefix="${PREFIX:-$HOME/.local}"
configuration="${CONFIGURATION:-release}"

swift build -c "$configuration" --product defaults
swift build -c "$configuration" --product defaults-edit-server
# The tool behind swift-argument-parser's generate-manual plugin, built alone: the plugin itself
# would build every product of the package first.
swift build -c "$configuration" --product generate-manual
bin="$(swift build -c "$configuration" --show-bin-path)"

man_dir="$prefix/share/man/man1"
bash_dir="$prefix/share/bash-completion/completions"
zsh_dir="$prefix/share/zsh/site-functions"
fish_dir="$prefix/share/fish/vendor_completions.d"
install -d "$prefix/bin" "$man_dir" "$bash_dir" "$zsh_dir" "$fish_dir"

install -m 755 "$bin/defaults" "$prefix/bin/defaults"
install -m 755 "$bin/defaults-edit-server" "$prefix/bin/defaults-edit-server"
"$bin/generate-manual" "$bin/defaults" --output-directory "$man_dir"
chmod 644 "$man_dir/defaults.1"
"$bin/defaults" --generate-completion-script bash > "$bash_dir/defaults"
"$bin/defaults" --generate-completion-script zsh > "$zsh_dir/_defaults"
"$bin/defaults" --generate-completion-script fish > "$fish_dir/defaults.fish"

echo "installed $prefix/bin/defaults, its manual ($man_dir/defaults.1) and completions:"
echo "  bash: $bash_dir/defaults (read by bash-completion)"
echo "  zsh:  $zsh_dir/_defaults (add $zsh_dir to fpath before compinit)"
echo "  fish: $fish_dir/defaults.fish (read by fish)"
case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "note: $prefix/bin is not on PATH; add it, for example in ~/.profile: export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
