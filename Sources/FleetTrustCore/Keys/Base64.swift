import Foundation

/// Base64 as OpenSSH writes it: standard alphabet, padded in key lines, unpadded in fingerprints.
public enum Base64 {
    public static func encode(_ bytes: [UInt8], padded: Bool = true) -> String {
        let text = Data(bytes).base64EncodedString()
        return padded ? text : String(text.prefix { $0 != "=" })
    }

    /// Decodes strict base64; tolerates missing padding. Returns nil on any invalid character.
    public static func decode(_ text: Substring) -> [UInt8]? {
        var s = String(text)
        let rem = s.utf8.count % 4
        if rem == 1 { return nil }
        if rem > 0 { s += String(repeating: "=", count: 4 - rem) }
        guard let data = Data(base64Encoded: s) else { return nil }
        return [UInt8](data)
    }

    public static func decode(_ text: String) -> [UInt8]? { decode(Substring(text)) }
}
