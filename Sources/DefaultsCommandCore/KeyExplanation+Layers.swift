import Defaults
import DefaultsFiles
import DefaultsPropertyList
import DefaultsSchema
import Foundation

extension KeyExplanation {
    /// What `defaults explain` tells of `key` of `domain`: every layer holding it, read without
    /// opening a suite, and which one a program reads.
    package static func explain(_ key: String, of domain: Domain) throws(CommandFailure) -> KeyExplanation {
        let schema: SchemaCatalog.Found?
        do {
            schema = try SchemaCatalog.schema(of: domain)
        } catch {
            Output.printError("\(error.message); explained without it")
            schema = nil
        }
        let keySchema = schema?.schema.key(named: key)
        let store = DomainStore()
        let userValue = try store.read(domain)?[key]
        let userFile = domain.fileURL(in: store.directory)

        // A value read by a key of another type is not the key's value: the library passes over
        // an administrator's such value (the resolution's `unreadable`), and a typed read of the
        // user's returns the key's default.
        let stored = DomainAdministration.resolution(of: domain, schema: schema?.schema).layers(
            forKey: key, user: userValue, userFile: userFile)

        var layers: [KeyExplanation.Layer] = []
        if let keySchema, let schema, keySchema.defaultValue != nil || keySchema.isDefaultDynamic {
            var layer = KeyExplanation.Layer(
                layer: "default", file: schema.file.path, value: keySchema.defaultValue,
                text: keySchema.defaultText, isRead: false)
            if let problem = keySchema.defaultValueProblem {
                // The schema only describes the program's declaration; its key reads its own default.
                layer.ignored = problem + "; the schema contradicts itself, a program reads its own compiled default"
            }
            layers.append(layer)
        }
        var readsDefault = stored.readIndex == nil
        for (index, layer) in stored.layers.enumerated() {
            var explained = KeyExplanation.Layer(
                layer: layer.kind.rawValue, file: layer.file.path, value: SchemaValue(layer.value),
                text: Output.text(layer.value.object), isRead: index == stored.readIndex)
            switch Self.locate(key, in: layer) {
            case .line(let line): explained.line = line
            case .binary: explained.binary = true
            case .unknown: break
            }
            if let problem = layer.kind == .user ? keySchema?.typeProblem(with: layer.value) : layer.unreadable {
                explained.ignored = problem
                if explained.isRead {
                    // Only the user's value can be read while not fitting (the administrator's are
                    // passed over): the key's typed read returns its default.
                    explained.ignored = problem + "; a program's typed read returns the default"
                    explained.isRead = false
                    readsDefault = true
                }
            } else {
                explained.problem = keySchema?.allowedValuesNote(for: layer.value)
            }
            if layer.kind == .user, keySchema?.iCloud ?? true {
                explained.sync = SyncJournal.record(
                    forKey: key, suiteFile: userFile, storedValue: layer.value,
                    isManaged: !stored.writability.isWritable
                ).map(KeyExplanation.Sync.init)
            }
            layers.append(explained)
        }
        if readsDefault, layers.first?.layer == "default", layers[0].ignored == nil {
            layers[0].isRead = true
        }

        // As programs see it: a managed value the key cannot read does not lock it.
        let writability = stored.writability
        return KeyExplanation(
            domain: domain.displayName, key: key, schema: schema?.file.path, type: keySchema?.type?.rawValue,
            swiftType: keySchema?.swiftType, layers: layers, writable: writability.isWritable,
            notWritableBecause: writability.isWritable ? nil : writability.description,
            problems: stored.problems.map(\.description))
    }

    /// Where `key` is written in `layer`'s file, read again (bounded) only to point at it.
    private static func locate(
        _ key: String, in layer: AdministratorResolution.StoredLayer
    ) -> PropertyListKeyLine.Location {
        // The administrator's files are never read through a link; the user's may be one.
        guard
            case .file(_, let data)? = try? BoundedFileRead.read(
                layer.file.path, followingLinks: layer.kind == .user)
        else { return .unknown }
        return PropertyListKeyLine.locate(key, in: data)
    }
}

extension KeyExplanation.Sync {
    package init(_ record: SyncedValueRecord) {
        self.init(
            writtenAt: record.writtenAt?.formatted(.iso8601), writer: record.writer, pending: record.isPending,
            setAside: record.setAsideBecause, matchesValue: record.matchesStoredValue)
    }
}

extension KeyExplanation {
    /// The explanation as people read it: a heading, a line per layer (`*` marks the value read),
    /// and whether the key can be written.
    package func textLines() -> [String] {
        var heading = "\(Output.quotedKey(key)) of \(domain)"
        if let schema {
            heading += ": \(type ?? "any type") (\(swiftType ?? "?")), schema \(schema)"
        } else {
            heading += ": no schema"
        }
        var lines = [heading]
        let width = layers.map(\.layer.count).max() ?? 0
        for layer in layers {
            var line = (layer.isRead ? "* " : "  ") + layer.layer.padding(toLength: width, withPad: " ", startingAt: 0)
            // A collection's text spans lines: one line per layer.
            let valueLines = layer.text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            line += "  " + valueLines.joined(separator: " ")
            if let file = layer.file {
                line += "  " + file + (layer.line.map { ":\($0)" } ?? (layer.binary == true ? " (binary)" : ""))
            }
            if let ignored = layer.ignored {
                line += "  ignored: " + ignored
            }
            if let problem = layer.problem {
                line += "  " + problem
            }
            lines.append(line)
            if let sync = layer.sync {
                var text = "      synced: version of \(sync.writtenAt ?? "an unknown time"), writer \(sync.writer)"
                if let setAside = sync.setAside {
                    text += ", not pushed: \(setAside)"
                } else {
                    text += sync.pending ? ", not yet pushed" : ", pushed or received"
                }
                if !sync.matchesValue {
                    text += "; the file's value changed since (not yet recorded for sync)"
                }
                lines.append(text)
            }
        }
        if !layers.contains(where: \.isRead) {
            lines.append("  (no layer is read: the program's own default, if any)")
        }
        lines.append("* the value a program reads")
        lines.append(writable ? "writable: true" : "writable: false: \(notWritableBecause ?? "")")
        return lines
    }
}
