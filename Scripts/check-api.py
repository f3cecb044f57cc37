#!/usr/bin/env python3
"""Checks that `import Defaults` still gives every public declaration of a baseline commit.

    python3 Scripts/check-api.py --baseline SHA            # after `swift build`; .ci/run names SHA
    python3 Scripts/check-api.py --baseline SHA --write-baseline MODULES_DIR

The library's public API is listed one declaration a line, from `swift-api-digester -dump-sdk`
(the tool behind `swift package diagnose-api-breaking-changes`): its kind and full name; its
types, each parameter's default and ownership (`inout`); its generic signature; whether it is
static, throws, rethrows, is async, is a protocol's requirement or its default; its accessors;
and the conformances of the library's types. The baseline's list is kept in
API/Baselines/SHA.txt, so that CI never builds the baseline; `--write-baseline` writes it from
the baseline's built modules (`.build/debug/Modules` of a checkout of SHA, this toolchain).

It reads `Defaults` and every module it re-exports (Sources/Defaults/Exports.swift), with those
modules' names (and Foundation's, which differ between platforms) taken out of every type, and
each public typealias of the library read as the type it names: a declaration moved into a
re-exported module, or a type now reached through a typealias, is one code still compiles
against. SwiftPM's `diagnose-api-breaking-changes` compares one module at a time, so it reports
such a move as a removal, and on this package it fails to load the modules (the module maps of
the C targets built for the host and for the target clash).

A baseline line missing now is a removed or changed declaration; a new requirement with no
default, or a new case of an enum that existed, breaks code too. Each must be undone, or the
declaration named in CHANGELOG.md (in backquotes: `FileSuite.set(_:forKey:)` or
`FileSuite.set`, `Type: Protocol` for a conformance). Prints each with its verdict; exits 1 if
any is not named.
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
        ["swift-api-digester", "-dump-sdk", "-module", module, "-I", str(modules_dir), "-module-cache-path",
         str(Path(directory) / "ModuleCache"), "-avoid-tool-args", "-avoid-location", "-o", str(output)],
        cwd=ROOT, text=True, capture_output=True)
    if result.returncode != 0 or not output.is_file():
        sys.exit(f"error: swift-api-digester could not dump {module}:\n{result.stderr[-3000:]}")
    root = json.loads(output.read_text())["ABIRoot"]
    if not root.get("children"):
        sys.exit(f"error: swift-api-digester found nothing in {module} (was it built?)")
    return root


MARKERS = {"Copyable", "Escapable", "SendableMetatype", "BitwiseCopyable"}  # the compiler's, everywhere
FOUNDATION = re.compile(r"(?<![\w.])(?:FoundationEssentials|FoundationInternationalization|Foundation)\.")


def async_names(roots):
    """The mangled names of the async declarations: the dump has no flag for it."""
    mangled = []

    def gather(node):
        if node.get("mangledName"):
            mangled.append(node["mangledName"])
        for child in node.get("children", []) + node.get("accessors", []):
            gather(child)

    for root in roots:
        gather(root)
    result = subprocess.run(["swift", "demangle", "--compact"], input="\n".join(mangled), text=True,
                            capture_output=True)
    if result.returncode != 0:
        sys.exit(f"error: swift demangle failed: {result.stderr[-2000:]}")
    return {name for name, demangled in zip(mangled, result.stdout.splitlines()) if " async" in demangled}


def listing(roots, modules):
    """One line per public declaration: `Kind Full.name(labels:) : signature`, types written
    without the names of these modules (nor Foundation's, which differ between platforms)."""
    module_prefix = re.compile(
        r"(?<![\w.])(?:%s)\." % "|".join(re.escape(m) for m in sorted(modules, key=len, reverse=True)))

    def plain(text):
        return FOUNDATION.sub("", module_prefix.sub("", text or ""))

    lines = set()
    asynchronous = async_names(roots)
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

    def parameter(child):
        text = plain(child.get("printedName"))
        if child.get("paramValueOwnership"):
            text = f"{child['paramValueOwnership'].lower()} {text}"
        return text + (" = default" if child.get("hasDefaultArg") else "")

    def flags(node, in_protocol=False):
        # Whether a protocol's member is in an extension says whether it has a default; elsewhere
        # it is where the code happens to be written.
        found = [flag for flag in ("throwing", "isOpen", "isLet", "hasStorage", "static", "protocolReq")
                 if node.get(flag)]
        if in_protocol and node.get("isFromExtension"):
            found.append("isFromExtension")
        found += sorted(set(node.get("declAttributes", [])) & {"Rethrows", "Final", "Required"})
        if node.get("mangledName") in asynchronous:
            found.append("async")
        if node.get("funcSelfKind"):
            found.append(node["funcSelfKind"])
        return found

    def walk(node, path, in_protocol=False):
        kind = node.get("kind")
        if kind in DECLARATIONS:
            # Synthesized witnesses (`__derived_struct_equals`) are reached as `==`, not by name.
            if node.get("isInternal") or node.get("spi_group_names") or node.get("name", "").startswith("__derived"):
                return
            name = ".".join(path + [node.get("printedName", "")])
            types = [parameter(child) for child in node.get("children", []) if child.get("kind") in TYPES]
            signature = ", ".join(types)
            if node.get("genericSig"):
                signature += " " + plain(node["genericSig"])
            signature = " ".join([signature] + flags(node, in_protocol))
            lines.add(f"{node.get('declKind', kind)} {name} : {signature.strip()}")
            if not node.get("isExternal"):  # a standard type's own conformances are not ours
                for conformance in node.get("conformances", []):
                    protocol = conformance.get("name")
                    if protocol not in hidden and protocol not in MARKERS:
                        lines.add(f"Conformance {name} : {plain(conformance.get('printedName'))}")
            for accessor in node.get("accessors", []):
                if not accessor.get("isInternal"):
                    lines.add(" ".join([f"Accessor {name}.{accessor.get('accessorKind')} :"]
                                       + flags(accessor, in_protocol)))
            if kind == "TypeDecl":
                path = path + [node.get("printedName", "")]
                in_protocol = node.get("declKind") == "Protocol"
        for child in node.get("children", []):
            if child.get("kind") in DECLARATIONS:
                walk(child, path, in_protocol)

    for root in roots:
        for child in root.get("children", []):
            walk(child, [])
    return lines


def canonical(lines, aliases):
    """`lines` with every public typealias of the library written as the type it names
    (`Defaults.Writability` is `DefaultsWritability`, `_Defaults` is `Defaults`), to a fixed
    point, longest first: code naming either compiles the same. Typealiases' own lines stay."""
    if not aliases:
        return set(lines)
    names = sorted(aliases, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w.])(%s)(?![\w])" % "|".join(re.escape(name) for name in names))
    result = set()
    for line in lines:
        if not line.startswith("TypeAlias "):
            for _ in range(8):
                rewritten = pattern.sub(lambda match: aliases[match.group(1)], line)
                if rewritten == line:
                    break
                line = rewritten
        result.add(line)
    return result


def aliases_in(lines):
    """The public typealiases naming one of the library's types: alias to its type."""
    declared = {line.partition(" : ")[0].partition(" ")[2] for line in lines if not line.startswith("TypeAlias ")}
    found = {}
    for line in lines:
        match = re.match(r"^TypeAlias (\S+) : ([\w.]+)(?: .*)?$", line)
        if match and match.group(2) in declared:
            found[match.group(1)] = match.group(2)
    return found


def library_listing(modules_dir, commit=None):
    modules = [LIBRARY] + reexported(commit)
    with tempfile.TemporaryDirectory() as directory:
        return listing([dump(module, modules_dir, directory) for module in modules], modules)


def changelog_names():
    return set(re.findall(r"`([^`\n]+)`", (ROOT / "CHANGELOG.md").read_text()))


def is_named(line, names):
    """Whether CHANGELOG.md names the declaration of `line` itself: `FileSuite.set(_:forKey:)` or
    `FileSuite.set` for a member, `Type: Protocol` for a conformance."""
    head, _, signature = line.partition(" : ")
    kind, _, name = head.partition(" ")
    if kind == "Conformance":
        return f"{name}: {signature}" in names
    return name in names or re.sub(r"\(.*", "", name) in names


def breaking_additions(added, baseline):
    """Added lines that break code written against the baseline: a protocol requirement with no
    default (every conformer must add it) and a case of an enum that existed (exhaustive
    switches over it stop compiling)."""
    heads = {line.partition(" : ")[0] for line in baseline}
    defaults = {line.partition(" : ")[0].partition(" ")[2] for line in added | baseline if "isFromExtension" in line}
    found = []
    for line in added:
        head = line.partition(" : ")[0]
        kind, _, name = head.partition(" ")
        enclosing = name.rsplit(".", 1)[0] if "." in name else ""
        if kind == "EnumElement" and f"Enum {enclosing}" in heads:
            found.append(line)
        elif " protocolReq" in line and name not in defaults and kind != "Accessor":
            found.append(line)
    return found


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
    if bin_path.returncode != 0:
        sys.exit(f"error: swift build --show-bin-path failed: {bin_path.stderr[-2000:]}")
    current = library_listing(Path(bin_path.stdout.strip()) / "Modules")
    # Names as they are now: a type the baseline declared may be a typealias of a moved one.
    aliases = aliases_in(current)
    current = canonical(current, aliases)
    baseline = canonical(set(baseline_file.read_text().splitlines()) - {""}, aliases)
    names = changelog_names()
    changes = [(line, "removed or changed") for line in sorted(baseline - current)]
    changes += [(line, "added, and breaks code") for line in sorted(breaking_additions(current - baseline, baseline))]
    unexplained = 0
    for line, what in changes:
        named = is_named(line, names)
        unexplained += not named
        print(f"{line}\n    {what}; " + ("in CHANGELOG.md" if named else "not in CHANGELOG.md: undo it, or name it there"))
    print(f"check-api: {len(baseline)} public declarations at {arguments.baseline[:7]}, {len(current)} now; "
          f"{len(changes)} removed, changed or breaking, {unexplained} of them not in CHANGELOG.md")
    sys.exit(1 if unexplained else 0)


if __name__ == "__main__":
    main()
