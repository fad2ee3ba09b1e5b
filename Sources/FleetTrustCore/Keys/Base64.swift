import Foundation

/// Base64 as OpenSSH writes it: standard alphabet, padded in key lines, unpadded in fingerprints.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Written straight into the string's storage: a scan encodes every key line and fingerprint
    /// it reports, and going through `Data` and trimming the padding by characters cost more than
    /// the encoding. The bytes are Foundation's `base64EncodedString()` (`Base64Tests`).
    public static func encode(_ bytes: [UInt8], padded: Bool = true) -> String {
        let whole = bytes.count / 3, rest = bytes.count % 3
        let length = whole * 4 + (rest == 0 ? 0 : padded ? 4 : rest + 1)
        return String(unsafeUninitializedCapacity: length) { out in
            alphabet.withUnsafeBufferPointer { table in
                bytes.withUnsafeBufferPointer { input in
                    func sextet(_ group: UInt32, _ shift: UInt32) -> UInt8 { table[Int(group >> shift & 63)] }
                    var o = 0
                    for i in stride(from: 0, to: whole * 3, by: 3) {
                        let group = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                        out[o] = sextet(group, 18); out[o + 1] = sextet(group, 12); out[o + 2] = sextet(group, 6); out[o + 3] = sextet(group, 0)
                        o += 4
                    }
                    if rest > 0 {
                        let last = whole * 3
                        let group = UInt32(input[last]) << 16 | (rest == 2 ? UInt32(input[last + 1]) << 8 : 0)
                        out[o] = sextet(group, 18); out[o + 1] = sextet(group, 12)
                        o += 2
                        if rest == 2 { out[o] = sextet(group, 6); o += 1 }
                        if padded {
                            while o < length { out[o] = UInt8(ascii: "="); o += 1 }
                        }
                    }
                    return o
                }
            }
        }
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
