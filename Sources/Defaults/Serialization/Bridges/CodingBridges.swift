import DefaultsPropertyList
import Foundation

extension Defaults {
    /// Stores a `Codable` value as a JSON string, as the Defaults library does.
    public struct CodableBridge<Value: Codable>: Bridge, Sendable, ExpensiveDecoding {
        public typealias Serializable = String
        public init() {}

        public func serialize(_ value: Value?) -> String? {
            guard let value else { return nil }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            do {
                return String(decoding: try encoder.encode(value), as: UTF8.self)
            } catch {
                Defaults.logger.error("Could not encode a \(Value.self) as JSON: \(error)")
                return nil
            }
        }

        public func deserialize(_ object: String?) -> Value? {
            guard let object else { return nil }
            return try? JSONDecoder().decode(Value.self, from: Data(object.utf8))
        }
    }

    /// Stores a `Codable` value as a native property list (dictionaries, arrays, numbers), so that
    /// property-list tools show and edit its fields. Choose it with ``Defaults/PreferPropertyList``.
    ///
    /// The value must encode as a keyed or unkeyed container (a struct, class, array or dictionary).
    public struct PropertyListCodableBridge<Value: Codable>: Bridge, Sendable, ExpensiveDecoding {
        public typealias Serializable = Any
        public init() {}

        public func serialize(_ value: Value?) -> Any? {
            guard let value else { return nil }
            let encoder = PropertyListEncoder()
            encoder.outputFormat = .binary
            do {
                return try PropertyList.decode(try encoder.encode(value))
            } catch {
                Defaults.logger.error("Could not encode a \(Value.self) as a property list: \(error)")
                return nil
            }
        }

        public func deserialize(_ object: Any?) -> Value? {
            guard let object, let data = try? PropertyList.encodeXML(object) else { return nil }
            return try? PropertyListDecoder().decode(Value.self, from: data)
        }
    }

    /// Stores a `RawRepresentable` value as its raw value.
    public struct RawRepresentableBridge<Value: RawRepresentable>: Bridge, Sendable where Value.RawValue: Serializable {
        public typealias Serializable = Value.RawValue.Serializable
        public init() {}

        public func serialize(_ value: Value?) -> Serializable? {
            Value.RawValue.bridge.serialize(value?.rawValue)
        }

        public func deserialize(_ object: Serializable?) -> Value? {
            Value.RawValue.bridge.deserialize(object).flatMap(Value.init(rawValue:))
        }
    }

    /// Stores an `NSSecureCoding` object as keyed-archive data.
    ///
    /// On Linux, Foundation can archive only top-level classes (it stops the process for a class
    /// nested in another type); such a value is reported and not stored.
    public struct NSSecureCodingBridge<Value: NSObject & NSSecureCoding>: Bridge, Sendable {
        public typealias Serializable = Data
        public init() {}

        public func serialize(_ value: Value?) -> Data? {
            guard let value else { return nil }
            #if !canImport(Darwin)
            guard String(reflecting: type(of: value)).split(separator: ".").count == 2 else {
                Defaults.logger.error(
                    "Cannot archive \(String(reflecting: type(of: value))): Foundation on Linux archives only top-level classes"
                )
                return nil
            }
            #endif
            do {
                return try NSKeyedArchiver.archivedData(withRootObject: value, requiringSecureCoding: true)
            } catch {
                Defaults.logger.error("Could not archive a \(Value.self): \(error)")
                return nil
            }
        }

        public func deserialize(_ object: Data?) -> Value? {
            guard let object else { return nil }
            return try? NSKeyedUnarchiver.unarchivedObject(ofClass: Value.self, from: object)
        }
    }
}
