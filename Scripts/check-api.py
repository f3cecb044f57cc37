#!/usr/bin/env python3
"""Checks that `import Defaults` still gives every public declaration of a baseline commit.

    python3 Scripts/check-api.py --baseline SHA            # after `swift build`; .ci/run names SHA
    python3 Scripts/check-api.py --baseline SHA --write-baseline MODULES_DIR

The library's public API is listed one declaration a line, from `swift-api-digester -dump-sdk`
(the tool behind `swift package diagnose-api-breaking-changes`): its kind, its full name, and its
signature (types, generic signature, throwing, conformances). The baseline's list is kept in
API/Baselines/SHA.txt, so that CI never builds the baseline; `--write-baseline` writes it from
the baseline's built modules (`.build/debug/Modules` of a checkout of SHA).

It reads the declarations of `Defaults` and of every module it re-exports
(Sources/Defaults/Exports.swift), with their module names taken out of every type: a declaration
moved into a re-exported module is one code still reaches by `import Defaults`, written the same.
SwiftPM's `diagnose-api-breaking-changes` compares one module at a time, so it reports such a
move as a removal, and on this package it also fails to load the modules (the module maps of the
C targets built for the host and for the target clash).

Every line of the baseline missing now is a removed or changed declaration: it must be restored,
or its name (`Type.member`, in backquotes) written in CHANGELOG.md as a deliberate change.
Prints each with its verdict and exits 1 if any is not in CHANGELOG.md.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = "Defaults"
BASELINES = ROOT / "API" / "Baselines"
DECLARATIONS = {"TypeDecl", "Function", "Var", "TypeAlias", "Constructor", "Subscript", "AssociatedType"}
TYPES = {"TypeNominal", "TypeFunc", "TypeNameAlias"}  # a declaration's own types: return, parameters


def reexported(commit=None):
    """The modules `Defaults` re-exports, in the working tree or at `commit`."""
    path = f"Sources/{LIBRARY}/Exports.swift"
    if commit:
        shown = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, text=True, capture_output=True)
        text = shown.stdout if shown.returncode == 0 else ""
    else:
        text = (ROOT / path).read_text()
    return re.findall(r"^@_exported import (\w+)$", text, re.MULTILINE)


def dump(module, modules_dir, directory):
    output = Path(directory) / f"{module}.json"
    result = subprocess.run(
        ["swift-api-digester", "-dump-sdk", "-module", module, "-I", str(modules_dir), "-avoid-tool-args",
         "-avoid-location", "-o", str(output)], cwd=ROOT, text=True, capture_output=True)
    if result.returncode != 0 or not output.is_file():
        sys.exit(f"error: swift-api-digester could not dump {module}:\n{result.stderr[-3000:]}")
    root = json.loads(output.read_text())["ABIRoot"]
    if not root.get("children"):
        sys.exit(f"error: swift-api-digester found nothing in {module} (was it built?)")
    return root


def listing(roots, modules):
    """One line per public declaration: `Kind Full.name(labels:) : signature`."""
    module_prefix = re.compile(r"\b(?:%s)\." % "|".join(re.escape(m) for m in sorted(modules, key=len, reverse=True)))

    def plain(text):
        return module_prefix.sub("", text or "")

    lines = set()
    # Types of these modules that are not public (`package` ones too): conformances to them are
    # no one's API.
    hidden = set()

    def gather(node):
        if node.get("kind") == "TypeDecl" and node.get("isInternal"):
            hidden.add(node.get("printedName"))
        for child in node.get("children", []):
            gather(child)

    for root in roots:
        gather(root)

    def walk(node, path):
        kind = node.get("kind")
        if kind in DECLARATIONS:
            # Synthesized witnesses (`__derived_struct_equals`) are reached as `==`, not by name.
            if node.get("isInternal") or node.get("spi_group_names") or node.get("name", "").startswith("__derived"):
                return
            name = ".".join(path + [node.get("printedName", "")])
            types = [plain(child.get("printedName")) for child in node.get("children", [])
                     if child.get("kind") in TYPES]
            parts = [node.get("declKind", kind), name]
            signature = ", ".join(types)
            if node.get("genericSig"):
                signature += " " + plain(node["genericSig"])
            for flag in ("throwing", "isOpen", "isLet", "hasStorage", "static", "isAsync"):
                if node.get(flag):
                    signature += f" {flag}"
            if node.get("funcSelfKind"):
                signature += " " + node["funcSelfKind"]
            lines.add(" ".join(parts) + " : " + signature.strip())
            for conformance in node.get("conformances", []):
                if conformance.get("name") not in hidden:
                    lines.add(f"Conformance {name} : {plain(conformance.get('printedName'))}")
            for accessor in node.get("accessors", []):
                lines.add(f"Accessor {name}.{accessor.get('accessorKind', accessor.get('name'))}")
            path = path + [node.get("printedName", "")] if kind == "TypeDecl" else path
        for child in node.get("children", []):
            if child.get("kind") in DECLARATIONS:
                walk(child, path)

    for root in roots:
        for child in root.get("children", []):
            walk(child, [])
    # A public typealias to a type of these modules is that type under another name
    # (`Defaults.Writability` is `DefaultsWritability`, `_Defaults` is `Defaults`): it gives the
    # type's declaration, conformances and members under its own name, aliases of aliases too.
    aliases = {}
    for line in lines:
        match = re.match(r"^TypeAlias (\S+) : ([\w.]+)$", line)
        if match:
            aliases[match.group(1)] = match.group(2)
    while True:
        added = set()
        for alias, target in aliases.items():
            for line in lines:
                kind, _, rest = line.partition(" ")
                if rest.startswith(target + ".") or rest.startswith(target + " "):
                    added.add(f"{kind} {alias}{rest[len(target):]}")
        if added <= lines:
            return lines
        lines |= added


def library_listing(modules_dir, commit=None):
    modules = [LIBRARY] + reexported(commit)
    with tempfile.TemporaryDirectory() as directory:
        return listing([dump(module, modules_dir, directory) for module in modules], modules)


def changelog_names():
    return set(re.findall(r"`([^`\n]+)`", (ROOT / "CHANGELOG.md").read_text()))


def is_named(line, names, changed, aliases):
    """Whether CHANGELOG.md names the declaration of `line`: `FileSuite.set(_:forKey:)` (or
    `FileSuite.set`) for a member, the type for the type, the protocol for a conformance. A
    declaration still there under its name with another signature (`changed`) may be named by
    a type it is in: an entry on that type says what changed."""
    head, _, signature = line.partition(" : ")
    kind, _, name = head.partition(" ")
    if kind == "Conformance":
        return f"{name}: {signature}" in names or signature in names
    for alias, target in aliases.items():  # `_Defaults.Writability` is `Defaults.Writability`
        if name.startswith(alias + "."):
            name = target + name[len(alias):]
    bare = re.sub(r"\(.*", "", name)
    if name in names or bare in names:
        return True
    parts = bare.split(".")
    return changed and any(".".join(parts[:count]) in names for count in range(1, len(parts)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="the full SHA of the baseline commit")
    parser.add_argument("--write-baseline", metavar="MODULES_DIR", help="the baseline's built modules")
    arguments = parser.parse_args()
    if not re.fullmatch(r"[0-9a-f]{40}", arguments.baseline):
        sys.exit("error: --baseline takes a full 40-character commit SHA")
    baseline_file = BASELINES / f"{arguments.baseline}.txt"

    if arguments.write_baseline:
        # The baseline's own modules: the library and, if it had any then, those it re-exported.
        lines = library_listing(Path(arguments.write_baseline).resolve(), commit=arguments.baseline)
        BASELINES.mkdir(parents=True, exist_ok=True)
        baseline_file.write_text("\n".join(sorted(lines)) + "\n")
        print(f"check-api: wrote {len(lines)} declarations to {baseline_file.relative_to(ROOT)}")
        return

    if not baseline_file.is_file():
        sys.exit(f"error: no API baseline {baseline_file.relative_to(ROOT)}; write it with --write-baseline")
    bin_path = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, text=True, capture_output=True)
    current = library_listing(Path(bin_path.stdout.strip()) / "Modules")
    baseline = set(baseline_file.read_text().splitlines()) - {""}
    names = changelog_names()
    missing = sorted(baseline - current)
    heads = {line.partition(" : ")[0] for line in current}
    aliases = dict(re.match(r"^TypeAlias (\S+) : ([\w.]+)$", line).groups() for line in current
                   if re.match(r"^TypeAlias \S+ : [\w.]+$", line))
    unexplained = [line for line in missing
                   if not is_named(line, names, line.partition(" : ")[0] in heads, aliases)]
    for line in missing:
        verdict = "not in CHANGELOG.md: restore it or name it there" if line in unexplained else "in CHANGELOG.md"
        print(f"{line}\n    removed or changed; {verdict}")
    print(f"check-api: {len(baseline)} public declarations at {arguments.baseline[:7]}, {len(current)} now; "
          f"{len(missing)} removed or changed, {len(unexplained)} of them not in CHANGELOG.md")
    sys.exit(1 if unexplained else 0)


if __name__ == "__main__":
    main()
