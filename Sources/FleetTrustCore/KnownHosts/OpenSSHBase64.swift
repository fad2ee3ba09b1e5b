/// Base64 decoding exactly as OpenSSH's `b64_pton` (openbsd-compat/base64.c) does it.
///
/// OpenSSH decides whether a known_hosts key or salt is valid with this decoder, so ours
/// must accept and refuse the same texts: whitespace is skipped anywhere, padding is
/// required when the length is not a multiple of four, and padding bits must be zero.
enum OpenSSHBase64 {
    private static let table: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = Int8(index)
        }
        return table
    }()

    /// `isspace` in the C locale.
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0d) }

    static func decode<C: Collection>(_ text: C) -> [UInt8]? where C.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4 + 1)
        var state = 0
        var pending: UInt8 = 0
        var index = text.startIndex
        var sawPad = false
        while index != text.endIndex {
            let byte = text[index]
            index = text.index(after: index)
            if isSpace(byte) { continue }
            if byte == UInt8(ascii: "=") { sawPad = true; break }
            let value = table[Int(byte)]
            guard value >= 0 else { return nil }
            let v = UInt8(value)
            switch state {
            case 0: pending = v << 2; state = 1
            case 1: out.append(pending | v >> 4); pending = (v & 0x0f) << 4; state = 2
            case 2: out.append(pending | v >> 2); pending = (v & 0x03) << 6; state = 3
            default: out.append(pending | v); pending = 0; state = 0
            }
        }
        guard sawPad else { return state == 0 ? out : nil }
        switch state {
        case 0, 1:
            return nil
        case 2:
            var sawSecondPad = false
            while index != text.endIndex {
                let byte = text[index]
                index = text.index(after: index)
                if isSpace(byte) { continue }
                sawSecondPad = byte == UInt8(ascii: "=")
                break
            }
            guard sawSecondPad else { return nil }
        default:
            break
        }
        while index != text.endIndex {
            guard isSpace(text[index]) else { return nil }
            index = text.index(after: index)
        }
        return pending == 0 ? out : nil
    }
}
