#!/usr/bin/env python3
"""Checks who may import whom among this repository's Swift modules.

    python3 Scripts/check-imports.py              # the repository this script is in
    python3 Scripts/check-imports.py --root DIR   # a copy of it (Package.swift, Sources/, ...)

Reads the targets of Package.swift and SyncService/Package.swift from `swift package
dump-package` (nothing is cached), and every `import` of the Swift files of their targets under
Sources/, SyncService/Sources/ and Plugins/. Test targets and the test helpers (targets whose
path is under Tests/) are not checked: they may import anything. It reports:

- an import of a module of this repository that the importing target does not declare as a
  direct dependency (a module reached only through another one builds today by chance);
- an import of a product of a package the target's Package.swift declares, when the target does
  not declare that product. A package's products are read from its manifest in .build/checkouts
  when it is there (after a build or `swift package resolve`), else only the products this
  repository's manifests name are known. Modules of packages not declared (swift-nio through
  postgres-nio, say) and the toolchain's (Foundation, Glibc, Synchronization) are not checked;
- an import, or a declared dependency, that goes against LAYERS below: a module imports only
  modules of a lower layer, unless EXCEPTIONS allows it;
- a target whose dependencies reach what BUILDS_WITHOUT says it must build without.

Prints each problem as `PATH:LINE: X imports Y, which ...` and exits 1; otherwise prints one line
and exits 0. A new target must be given a layer here before it passes.
"""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

# ---- The policy ---------------------------------------------------------------------------------

# Each module of this repository and its layer: a module may import only modules of a lower layer.
LAYERS = [
    (
        "foundation",
        "imports no module of this repository",
        [
            "DefaultsPropertyList",
            "DefaultsSchema",
            "DefaultsTerminalText",
            "DefaultsSyncProtocol",
            "DefaultsMacrosPlugin",  # runs inside the compiler: swift-syntax only
            "DefaultsKeyFinder",  # runs at build time for DefaultsSchemaPlugin: swift-syntax only
            "CProcessHeap",  # C: glibc's heap totals, for the server's metrics
        ],
    ),
    (
        "below the library",
        "files and SQL, which know no key, suite or engine",
        ["DefaultsFiles", "DefaultsSyncSQL"],
    ),
    (
        "storage",
        "suites of property-list values and their backends, which know no key, observer or engine",
        ["DefaultsStorage"],
    ),
    (
        "sync",
        "the sync engine, its journal and rules, and the store protocol, which know keys by name only",
        ["DefaultsSync"],
    ),
    ("library", "the typed API and observation, re-exporting storage and sync", ["Defaults"]),
    (
        "integration",
        "built on Defaults (or, for the server, on the SQL layer)",
        [
            "DefaultsCombine",
            "DefaultsMacros",
            "DefaultsConfiguration",
            "DefaultsSyncTesting",
            "DefaultsSyncEncryption",
            "DefaultsSyncClient",
            "DefaultsPostgres",
            "DefaultsSyncServer",
        ],
    ),
    (
        "command core",
        "what the `defaults` command and its settings editor share: domains, schemas, values",
        ["DefaultsCommandCore"],
    ),
    ("editor", "the settings editor's model, request gate and HTTP server", ["DefaultsEditor"]),
    (
        "program",
        "executables and plugins, which nothing imports",
        [
            "DefaultsCommand",
            "DefaultsEditServer",
            "DefaultsSyncCommand",
            "DefaultsExample",
            "DefaultsSchemaPlugin",
            "DefaultsSyncServerCommand",
        ],
    ),
]

# Imports (and dependencies) allowed besides the layers, each with why.
EXCEPTIONS = {
    ("DefaultsSyncClient", "DefaultsSyncEncryption"): "SyncServiceStore encrypts end to end with a passphrase",
}

# What a target's dependencies, direct or not, must never reach: a target of this repository
# ("Defaults") or a package ("package:postgres-nio"; "package:*" is any package), with why.
BUILDS_WITHOUT = {
    "DefaultsCommand": (
        {"package:postgres-nio", "package:swift-nio-ssl", "package:swift-nio"},
        "`defaults` builds without postgres-nio, its TLS stack, or an HTTP server (that is defaults-edit-server)",
    ),
    "DefaultsCommandCore": (
        {"package:postgres-nio", "package:swift-nio-ssl", "package:swift-nio"},
        "`defaults` links it, and builds without a server or a database client",
    ),
    "DefaultsSyncServer": ({"Defaults"}, "the server links the SQL layer, never DefaultsPostgres or the engine"),
    "DefaultsSyncServerCommand": ({"Defaults"}, "the server links the SQL layer, never DefaultsPostgres or the engine"),
    "DefaultsSyncSQL": ({"Defaults"}, "the server links it without the engine"),
    "DefaultsStorage": ({"Defaults", "DefaultsSync"}, "storage knows no key, observer or sync engine"),
    "DefaultsSync": ({"Defaults"}, "sync knows keys by name only, never the typed API"),
    "DefaultsSchema": ({"package:*"}, "Foundation only: tools read schemas without the library's dependencies"),
    "DefaultsSyncProtocol": ({"package:*"}, "Foundation only: shared by the server, its clients and the SQL layer"),
    "DefaultsPropertyList": ({"package:*"}, "dependency-free"),
}

# Imports of modules the target does not declare, each building only because another dependency
# brings the module: none since the manifests declare them all. An entry that matches nothing is
# reported, so that the list never outlives its reason.
KNOWN_UNDECLARED: dict = {}

# ---- Reading the packages -------------------------------------------------------------------------

PACKAGES = [".", "SyncService"]  # relative to the root


class Package:
    def __init__(self, root, relative):
        self.directory = (root / relative).resolve()
        self.manifest_name = "Package.swift" if relative == "." else f"{relative}/Package.swift"
        self.manifest = dump_package(self.directory)
        self.targets = {target["name"]: target for target in self.manifest["targets"]}
        self.products = {
            product["name"]: list(product.get("targets", [])) for product in self.manifest.get("products", [])
        }
        # Declared package dependencies, by every name a `.product(package:)` may give them.
        self.dependencies = {}  # name -> {"identity", "path"}
        for dependency in self.manifest.get("dependencies", []):
            for kind, values in dependency.items():
                for value in values if isinstance(values, list) else [values]:
                    if not isinstance(value, dict) or "identity" not in value:
                        continue
                    path = value.get("path") if kind == "fileSystem" else None
                    info = {"identity": value["identity"].lower(), "path": path}
                    names = {value["identity"].lower()}
                    if value.get("nameForTargetDependencyResolutionOnly"):
                        names.add(value["nameForTargetDependencyResolutionOnly"].lower())
                    location = value.get("location", {})
                    for remote in (location.get("remote") or []) if isinstance(location, dict) else []:
                        url = remote.get("urlString", "") if isinstance(remote, dict) else str(remote)
                        names.add(url.rstrip("/").split("/")[-1].removesuffix(".git").lower())
                    for name in names:
                        self.dependencies[name] = info

    def target_directory(self, target):
        if target.get("path"):
            return self.directory / target["path"]
        return self.directory / ("Plugins" if target.get("type") == "plugin" else "Sources") / target["name"]

    def is_checked(self, target):
        """Test targets and helpers under Tests/ may import anything."""
        if target.get("type") == "test":
            return False
        path = target.get("path") or ""
        return not (path == "Tests" or path.startswith("Tests/"))


def dump_package(directory):
    command = ["swift", "package", "--package-path", str(directory), "dump-package"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        sys.exit("check-imports: `swift` is not on the PATH")
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        sys.exit(f"check-imports: `{' '.join(command)}` failed ({result.returncode})")
    return json.loads(result.stdout)


def dependency_parts(dependency):
    """(kind, name, package) of a target dependency in dump-package's JSON."""
    kind, values = next(iter(dependency.items()))
    if kind == "product":
        return "product", values[0], (values[1] or values[0]).lower()
    return "target", values[0], None  # byName or target: a target of the same package


LIBRARY = re.compile(r"\.library\(\s*name:\s*\"([^\"]+)\"(.*?)targets:\s*\[([^\]]*)\]", re.S)


def checkout_products(identity, packages):
    """A dependency's library products and their modules, from its manifest in a .build/checkouts
    of this repository; None when no checkout of it is there."""
    for package in packages:
        checkouts = package.directory / ".build" / "checkouts"
        if not checkouts.is_dir():
            continue
        for entry in checkouts.iterdir():
            if entry.name.lower() != identity:
                continue
            manifests = sorted(entry.glob("Package*.swift"))
            if not manifests:
                continue
            products = {}
            for manifest in manifests:
                for match in LIBRARY.finditer(manifest.read_text(errors="replace")):
                    modules = set(re.findall(r"\"([^\"]+)\"", match.group(3)))
                    products.setdefault(match.group(1), set()).update(modules)
            return products
    return None


# ---- Reading imports ----------------------------------------------------------------------------

IMPORT = re.compile(
    r"^\s*(?:(?:@\w+(?:\([^)]*\))?|public|package|internal|fileprivate|private|open)\s+)*"
    r"import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?([A-Za-z_][A-Za-z0-9_]*)"
)


STRING_START = re.compile(r'(#*)("""|")')


def code_only(text):
    """`text` with comments and string literals blanked out, line breaks kept, so that an
    `import` in a comment or a multi-line string (generated code) is not taken for one."""
    out = []
    i, n = 0, len(text)
    depth = 0  # of nested block comments
    closing = None  # the delimiter that ends the string literal being read
    is_raw = False
    while i < n:
        c = text[i]
        if depth:
            if text.startswith("/*", i):
                depth += 1
            elif text.startswith("*/", i):
                depth -= 1
            else:
                out.append("\n" if c == "\n" else " ")
                i += 1
                continue
            out.append("  ")
            i += 2
        elif closing:
            if c == "\\" and not is_raw and i + 1 < n and text[i + 1] != "\n":
                out.append("  ")
                i += 2
            elif text.startswith(closing, i):
                out.append(" " * len(closing))
                i += len(closing)
                closing = None
            elif c == "\n" and closing == '"':  # an unterminated one-line string ends with its line
                out.append(c)
                i += 1
                closing = None
            else:
                out.append("\n" if c == "\n" else " ")
                i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            depth = 1
            out.append("  ")
            i += 2
        elif c in "#\"" and (match := STRING_START.match(text, i)):
            hashes, quote = match.group(1), match.group(2)
            closing, is_raw = quote + hashes, bool(hashes)
            out.append(" " * (match.end() - i))
            i = match.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def imports_of(path):
    """(line, module) of each import in a Swift file."""
    found = []
    for number, line in enumerate(code_only(path.read_text(errors="replace")).splitlines(), start=1):
        match = IMPORT.match(line)
        if match:
            found.append((number, match.group(1)))
    return found


def swift_files(directory, excluded):
    for dirpath, dirnames, filenames in os.walk(directory):
        current = Path(dirpath)
        dirnames[:] = sorted(
            name for name in dirnames if not name.endswith(".docc") and (current / name) not in excluded
        )
        for name in sorted(filenames):
            if name.endswith(".swift") and (current / name) not in excluded:
                yield current / name


# ---- The check ----------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    arguments = parser.parse_args()
    root = arguments.root.resolve()

    packages = [Package(root, relative) for relative in PACKAGES if (root / relative / "Package.swift").is_file()]
    problems = []

    def relative(path):
        try:
            return str(Path(path).relative_to(root))
        except ValueError:
            return str(path)

    # The policy's tables against the packages.
    layer_of, layer_names = {}, []
    for index, (name, _, modules) in enumerate(LAYERS):
        layer_names.append(name)
        for module in modules:
            layer_of[module] = index
    repository = {}  # module -> (package, target) of every checked target
    for package in packages:
        for target in package.targets.values():
            if package.is_checked(target):
                repository[target["name"]] = (package, target)
    for module in sorted(set(repository) - set(layer_of)):
        problems.append(f"{Path(__file__).name}: {module} has no layer: add it to LAYERS")
    for module in sorted(set(layer_of) - set(repository)):
        problems.append(f"{Path(__file__).name}: LAYERS lists {module}, which is no target: remove it")

    # A product of a package of this repository, as another of its packages depends on it.
    def repository_package(package, name):
        info = package.dependencies.get(name)
        if not info or not info["path"]:
            return None
        return next((other for other in packages if other.directory == Path(info["path"]).resolve()), None)

    # Each declared package's products and their modules: from its checkout, else the names used.
    products_of, manifests_read, manifests_missing = {}, set(), set()
    for package in packages:
        for name, info in package.dependencies.items():
            identity = info["identity"]
            if identity in products_of or repository_package(package, name):
                continue
            products = checkout_products(identity, packages)
            if products is None:
                manifests_missing.add(identity)
                products = {}
            else:
                manifests_read.add(identity)
            products_of[identity] = products
    for package in packages:
        for target in package.targets.values():
            for dependency in target.get("dependencies", []):
                kind, name, package_name = dependency_parts(dependency)
                info = package.dependencies.get(package_name) if kind == "product" else None
                if info and not repository_package(package, package_name):
                    products_of[info["identity"]].setdefault(name, {name})

    def declared(package, target):
        """The modules `target` declares: of this repository, and (package identity -> modules)."""
        own, external = set(), {}
        for dependency in target.get("dependencies", []):
            kind, name, package_name = dependency_parts(dependency)
            if kind == "target":
                own.add(name)
                continue
            other = repository_package(package, package_name)
            if other:
                own.update(other.products.get(name, []))
                continue
            info = package.dependencies.get(package_name)
            if info:
                external.setdefault(info["identity"], set()).update(products_of[info["identity"]].get(name, {name}))
        return own, external

    def provider(package, module):
        """The declared package whose products hold `module`, or None."""
        for info in package.dependencies.values():
            if info["path"]:
                continue
            for modules in products_of.get(info["identity"], {}).values():
                if module in modules:
                    return info["identity"]
        return None

    def closure(package, target_name, seen=None):
        """Everything `target_name`'s dependencies reach: its targets' names and `package:` ids."""
        seen = set() if seen is None else seen
        target = package.targets[target_name]
        for dependency in target.get("dependencies", []):
            kind, name, package_name = dependency_parts(dependency)
            if kind == "target":
                reached = [(package, name)]
            else:
                other = repository_package(package, package_name)
                if other:
                    reached = [(other, module) for module in other.products.get(name, [])]
                else:
                    info = package.dependencies.get(package_name)
                    seen.add(f"package:{info['identity'] if info else package_name}")
                    reached = []
            for other, name in reached:
                if name not in seen and name in other.targets:
                    seen.add(name)
                    closure(other, name, seen)
        return seen

    def layered(importer, imported):
        """Why `importer` may not import `imported` by the layers; None when it may."""
        if importer not in layer_of or imported not in layer_of or (importer, imported) in EXCEPTIONS:
            return None
        if layer_of[imported] < layer_of[importer]:
            return None
        return (
            f"is in layer {layer_of[imported]} ({layer_names[layer_of[imported]]}), not below "
            f"{importer}'s layer {layer_of[importer]} ({layer_names[layer_of[importer]]}); "
            f"see LAYERS in Scripts/check-imports.py"
        )

    used_exceptions, used_undeclared = set(), set()
    file_count = import_count = 0
    for package in packages:
        for target in package.targets.values():
            if not package.is_checked(target):
                continue
            name = target["name"]
            own, external = declared(package, target)

            # The manifest: declared dependencies keep the layers, and what a target builds without.
            for module in sorted(own):
                if module in repository:
                    if (name, module) in EXCEPTIONS:
                        used_exceptions.add((name, module))
                    why = layered(name, module)
                    if why:
                        problems.append(f"{package.manifest_name}: {name} depends on {module}, which {why}")
            if name in BUILDS_WITHOUT:
                banned, reason = BUILDS_WITHOUT[name]
                reached = closure(package, name)
                for item in sorted(reached):
                    if item in banned or ("package:*" in banned and item.startswith("package:")):
                        problems.append(
                            f"{package.manifest_name}: {name}'s dependencies reach {item}: {reason} "
                            f"(BUILDS_WITHOUT in Scripts/check-imports.py)"
                        )

            # The imports.
            directory = package.target_directory(target)
            excluded = {(directory / path).resolve() for path in target.get("exclude", [])}
            excluded |= {(directory / path) for path in target.get("exclude", [])}
            for path in swift_files(directory, excluded):
                file_count += 1
                for line, module in imports_of(path):
                    import_count += 1
                    if module == name:
                        continue
                    where = f"{relative(path)}:{line}: {name} imports {module}, which"
                    if module in repository:
                        if module not in own:
                            if (name, module) in KNOWN_UNDECLARED:
                                used_undeclared.add((name, module))
                            else:
                                problems.append(
                                    f"{where} is not a declared dependency of {name} ({package.manifest_name})"
                                )
                        why = layered(name, module)
                        if why:
                            problems.append(f"{where} {why}")
                        elif (name, module) in EXCEPTIONS:
                            used_exceptions.add((name, module))
                        continue
                    identity = provider(package, module)
                    if identity is None or module in external.get(identity, set()):
                        continue
                    if (name, module) in KNOWN_UNDECLARED:
                        used_undeclared.add((name, module))
                        continue
                    problems.append(
                        f"{where} is a product of {identity} that {name} does not declare ({package.manifest_name})"
                    )

    for importer, imported in sorted(set(EXCEPTIONS) - used_exceptions):
        problems.append(
            f"{Path(__file__).name}: EXCEPTIONS allows {importer} to import {imported}, which it no longer "
            f"does: remove the entry"
        )
    for importer, module in sorted(set(KNOWN_UNDECLARED) - used_undeclared):
        known = module in repository or any(
            module in modules for products in products_of.values() for modules in products.values()
        )
        if known:  # otherwise its package's manifest was not read: nothing can be said
            problems.append(
                f"{Path(__file__).name}: KNOWN_UNDECLARED lists {importer} importing {module}, which is "
                f"declared now or gone: remove the entry"
            )

    for problem in problems:
        print(problem)
    if problems:
        print(f"check-imports: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    found = len(manifests_read)
    manifests = f"{found} of {found + len(manifests_missing)} dependency manifests found in .build/checkouts"
    if manifests_missing:
        manifests += " (of the others, only the products Package.swift names are known)"
    print(
        f"check-imports: {len(repository)} modules, {file_count} files, {import_count} imports: every import "
        f"declared and layered; {len(used_undeclared)} undeclared as listed in KNOWN_UNDECLARED; {manifests}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
