import Defaults
import DefaultsCommandCore
import DefaultsPropertyList
import DefaultsSchema
import Foundation

/// The domain the editor shows and changes, read and written as the `defaults` command does:
/// reading opens no suite (a damaged file is reported and left where it is), and every change is
/// the file layer's locked edit beneath the administrator's layers (``DomainStore/change(_:replacingDamaged:_:)``),
/// with each value checked by the schema's rule before anything is written.
package struct EditedDomain: Sendable {
    package let domain: Domain
    package let store: DomainStore

    package init(domain: Domain, store: DomainStore = DomainStore()) {
        self.domain = domain
        self.store = store
    }

    /// Everything the page shows at first.
    package struct Snapshot: Codable, Equatable, Sendable {
        package var domain: String
        package var schema: String?
        /// Why the schema could not be read; the domain is then shown without one.
        package var schemaProblem: String?
        package var keys: [EditorEntry]
    }

    /// What changed keys now are: their entries, and the keys no layer holds any more.
    package struct Update: Codable, Equatable, Sendable {
        package var entries: [EditorEntry]
        package var removed: [String]
    }

    // MARK: Reading

    /// The domain's files and schema, read once for a request.
    private struct Reading {
        var schema: SchemaCatalog.Found?
        var schemaProblem: String?
        var user: [String: PropertyListValue]
        var layers: AdministratorResolution
        var userFile: URL
    }

    private func read() throws(EditorFailure) -> Reading {
        var schema: SchemaCatalog.Found?
        var schemaProblem: String?
        do {
            schema = try SchemaCatalog.schema(of: domain)
        } catch {
            schemaProblem = error.message
        }
        let user: [String: PropertyListValue]
        do {
            user = try store.read(domain) ?? [:]
        } catch {
            throw .refused(error.message)
        }
        return Reading(
            schema: schema, schemaProblem: schemaProblem, user: user,
            layers: DomainAdministration.resolution(of: domain, schema: schema?.schema),
            userFile: domain.fileURL(in: store.directory))
    }

    package func snapshot() throws(EditorFailure) -> Snapshot {
        let reading = try read()
        var names = Set(reading.user.keys).union(reading.layers.heldKeys)
        names.formUnion(reading.schema?.schema.keys.map(\.name) ?? [])
        return Snapshot(
            domain: domain.displayName, schema: reading.schema?.file.path, schemaProblem: reading.schemaProblem,
            keys: names.sorted().compactMap { entry($0, in: reading) })
    }

    package func update(forKeys keys: some Sequence<String>) throws(EditorFailure) -> Update {
        let reading = try read()
        var update = Update(entries: [], removed: [])
        for key in Set(keys).sorted() {
            if let entry = entry(key, in: reading) {
                update.entries.append(entry)
            } else {
                update.removed.append(key)
            }
        }
        return update
    }

    package func entry(_ key: String) throws(EditorFailure) -> EditorEntry? {
        entry(key, in: try read())
    }

    /// `key` as the page shows it; `nil` when neither the schema nor any file holds it.
    private func entry(_ key: String, in reading: Reading) -> EditorEntry? {
        let keySchema = reading.schema?.schema.key(named: key)
        let userValue = reading.user[key]
        let stored = reading.layers.layers(forKey: key, user: userValue, userFile: reading.userFile)
        guard keySchema != nil || !stored.layers.isEmpty else { return nil }

        var read = stored.readIndex.map { stored.layers[$0] }
        // A user's value the key cannot read: a program's typed read returns the default.
        if let keySchema, let layer = read, layer.kind == .user, keySchema.typeProblem(with: layer.value) != nil {
            read = nil
        }
        var value = read?.value
        var source = read?.kind.rawValue
        if value == nil, let keySchema, keySchema.defaultValueProblem == nil, let defaultValue = keySchema.defaultValue
        {
            value = PropertyListValue(defaultValue)
            source = "default"
        }
        let allowed = keySchema?.consistentAllowedValues
        let problem = read.flatMap { keySchema?.allowedValuesNote(for: $0.value) }
        let text = value.map { EditorValueText.bounded(Output.text($0.object)) }
        let editText = value.map(EditorValueText.editText)
        let tooLarge = text?.isCut == true || (editText?.utf8.count ?? 0) > EditorValueText.textLimit
        return EditorEntry(
            name: key, inSchema: keySchema != nil, description: keySchema?.description,
            type: keySchema?.type?.rawValue ?? value?.typeName, swiftType: keySchema?.swiftType,
            defaultText: keySchema.map { EditorValueText.bounded($0.defaultText).text },
            allowed: allowed.map(Self.allowed), value: text?.text, editText: tooLarge ? nil : editText,
            tooLargeToEdit: tooLarge ? true : nil,
            source: source, sourceFile: read?.file.path, modified: userValue != nil,
            fingerprint: EditorValueText.fingerprint(userValue), writable: stored.writability.isWritable,
            notWritableBecause: stored.writability.isWritable ? nil : stored.writability.description,
            layers: stored.layers.enumerated().map { index, layer in
                EditorEntry.Layer(
                    layer: layer.kind.rawValue, file: layer.file.path,
                    text: EditorValueText.bounded(Output.text(layer.value.object)).text,
                    isRead: index == stored.readIndex && layer.kind == read?.kind, ignored: layer.unreadable)
            },
            problem: problem, syncs: keySchema?.iCloud ?? false)
    }

    private static func allowed(_ allowed: AllowedValues) -> EditorEntry.Allowed {
        func text(_ value: SchemaValue) -> String { EditorValueText.editText(PropertyListValue(value)) }
        switch allowed {
        case .range(let lowerBound, let upperBound):
            return EditorEntry.Allowed(summary: allowed.summary, lower: text(lowerBound), upper: text(upperBound))
        case .choices(let choices):
            return EditorEntry.Allowed(summary: allowed.summary, choices: choices.map(text))
        }
    }

    /// What `defaults explain --json` tells of `key`.
    package func explanation(of key: String) throws(EditorFailure) -> KeyExplanation {
        do {
            return try KeyExplanation.explain(key, of: domain)
        } catch {
            throw .refused(error.message)
        }
    }

    // MARK: Changing

    /// Writes the value `text` stands for to `key`, read as the schema's type of the key (or
    /// `type`, for a key the schema does not declare) and checked by the schema's rule first.
    ///
    /// - Parameters:
    ///   - expected: The ``EditorEntry/fingerprint`` of the user's value the page showed (`nil`:
    ///     none); unless `force`, the write is refused when the value is another now.
    /// - Returns: The key as it is after the write.
    package func write(
        _ key: String, text: String, type: String?, expected: String?, force: Bool
    ) throws(EditorFailure) -> EditorEntry {
        let reading = try read()
        if reading.user[key] == nil, reading.schema?.schema.key(named: key) == nil {
            try Self.checkNewName(key)
        }
        // A key the schema does not declare keeps the type of the value it holds unless told.
        var storedType = reading.user[key].flatMap { StoredType(rawValue: $0.typeName) }
        if let type {
            guard let known = StoredType(rawValue: type) else { throw .badRequest("Unknown type \(type)") }
            storedType = known
        }
        let value: PropertyListValue
        do throws(CommandFailure) {
            if let found = reading.schema, let keySchema = found.schema.key(named: key) {
                value = try keySchema.untypedValue(text, in: domain, schemaFile: found.file)
            } else {
                // Read as the type asked for, refused in the command's words when it is not one.
                let parsed = try? ValueParsing.value(text, as: storedType)
                guard let parsed, storedType.map({ parsed.typeName == $0.rawValue }) ?? true else {
                    throw .notOfType(text, key: key, in: domain, expected: storedType)
                }
                value = parsed
            }
        } catch {
            throw .refused(error.message)
        }
        try refuseManaged(key, in: reading)
        try change(key, unlessChangedFrom: force ? .none : .some(expected), "written") { edit in
            edit.set(value, forKey: key)
        }
        guard let entry = try entry(key) else {
            throw .refused("\(key) was written, but no layer holds it now: another process removed it")
        }
        return entry
    }

    /// Removes the user's value of `key`: a key the schema declares reads its default (or an
    /// administrator's value) again; any other key is gone unless an administrator's file holds it.
    ///
    /// - Parameter expected: When given, the ``EditorEntry/fingerprint`` of the value the page
    ///   showed: the reset is refused when the value is another now, as a write is.
    package func reset(_ key: String, expected: String?? = .none) throws(EditorFailure) -> EditorEntry? {
        try refuseManaged(key, in: try read())
        try change(key, unlessChangedFrom: expected, "reset") { edit in
            edit.remove(key)
        }
        return try entry(key)
    }

    /// Removes every value of the user's file, as `defaults delete domain` does, keeping the file.
    package func resetAll() throws(EditorFailure) -> Snapshot {
        try change { edit in edit.replaceAll(with: [:]) }
        return try snapshot()
    }

    private func refuseManaged(_ key: String, in reading: Reading) throws(EditorFailure) {
        guard !reading.layers.writability(ofKey: key).isWritable else { return }
        throw .managed(
            DomainAdministration.refusal(writing: [key], of: domain, in: reading.layers, editedKeyCount: 1).message)
    }

    /// Changes `key` by `edit` unless the user's value of it is no longer the one `expected`
    /// names (``EditorEntry/fingerprint``; `.none`: whatever it is), checked holding the file's lock.
    private func change(
        _ key: String, unlessChangedFrom expected: String??, _ verb: String,
        _ edit: (inout DomainEdit) -> Void
    ) throws(EditorFailure) {
        var changedElsewhere = false
        try change { (domainEdit) throws(CommandFailure) in
            if case .some(let expected) = expected, EditorValueText.fingerprint(domainEdit.values[key]) != expected {
                changedElsewhere = true
                throw CommandFailure("changed elsewhere")
            }
            edit(&domainEdit)
        } orElse: { _ in
            changedElsewhere
                ? .conflict("\(key) was changed elsewhere since the page read it; nothing was \(verb)") : nil
        }
    }

    private func change(
        _ edit: (inout DomainEdit) throws(CommandFailure) -> Void,
        orElse failure: (CommandFailure) -> EditorFailure? = { _ in nil }
    ) throws(EditorFailure) {
        do {
            try store.change(domain, edit)
        } catch {
            throw failure(error) ?? .refused(error.message)
        }
    }

    /// The name of a key the page adds: no longer than a person types, without control characters.
    private static func checkNewName(_ key: String) throws(EditorFailure) {
        guard !key.isEmpty, key.utf8.count <= 1024, !key.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw .badRequest("A key's name must be 1 to 1,024 bytes without control characters")
        }
    }
}
