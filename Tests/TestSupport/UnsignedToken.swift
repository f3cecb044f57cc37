import Foundation

/// A token of no server's key, naming user `u` and namespace `com.example.app`: well formed, for
/// what happens before a server checks it (a client's own checks, a refusal).
public let unsignedToken: String = {
    func part(_ json: String) -> String {
        Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
    return part(#"{"alg":"HS256","typ":"JWT"}"#) + "."
        + part(#"{"sub":"u","ns":"com.example.app","iat":1700000000,"exp":4102444800}"#) + ".c2lnbmF0dXJl"
}()
