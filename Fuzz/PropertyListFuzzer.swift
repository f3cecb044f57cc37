// libFuzzer entry point for the DefaultsPropertyList readers and writers.
//
// Compiled together with the module's sources (see run.sh), so it calls the
// module directly. A crash, a sanitizer report, a timeout or a failed
// consistency check below is a bug.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func propertyListFuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    if let value = try? PropertyList.decode(data) {
        checkReencoding(value)
    }
    // The same bytes as old-style text (or an XML fragment), as `defaults write` would get them.
    if let value = try? PropertyList.parseText(String(decoding: data, as: UTF8.self)) {
        checkReencoding(value)
    }
    return 0
}

/// Whatever decodes must encode, decode again to an equal value, and encode to the same bytes.
private func checkReencoding(_ value: Any) {
    _ = PropertyList.openStepDescription(value)
    let xml: Data
    do {
        xml = try PropertyList.encodeXML(value)
    } catch {
        fuzzFailure("a decoded value does not encode: \(error)")
    }
    let again: Any
    do {
        again = try PropertyList.decode(xml)
    } catch {
        fuzzFailure("our own XML does not decode: \(error)\n\(String(decoding: xml, as: UTF8.self))")
    }
    // XML keeps dates to the second, so only date-free values must compare equal to the original.
    if !containsDate(value), !PropertyList.isEqual(value, again) {
        fuzzFailure("the value changed through XML:\n\(value)\n\(again)")
    }
    guard let xmlAgain = try? PropertyList.encodeXML(again), xmlAgain == xml else {
        fuzzFailure("encoding is not stable:\n\(String(decoding: xml, as: UTF8.self))")
    }
    guard let normalized = try? PropertyList.normalize(value), PropertyList.isEqual(normalized, value) else {
        fuzzFailure("normalize changed a decoded value: \(value)")
    }
}

private func containsDate(_ value: Any) -> Bool {
    switch value {
    case is Date: return true
    case let array as [Any]: return array.contains(where: containsDate)
    case let dictionary as [String: Any]: return dictionary.values.contains(where: containsDate)
    default: return false
    }
}

private func fuzzFailure(_ message: String) -> Never {
    // The harness must stop loudly so that libFuzzer saves the input.
    FileHandle.standardError.write(Data("PropertyListFuzzer: \(message)\n".utf8))
    abort()
}
