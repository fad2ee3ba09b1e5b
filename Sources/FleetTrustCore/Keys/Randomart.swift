/// The "randomart" picture of a fingerprint, drawn exactly as `ssh-keygen -lv` draws it
/// (OpenSSH `sshkey.c` `fingerprint_randomart`, the drunken-bishop walk over the digest).
public enum Randomart {
    public static func draw(_ key: HostKey) -> [String] {
        let title = "[\(key.kind.label) \(key.bits)]"
        return draw(digest: Digest.sha256(key.fingerprintedBlob), title: title, hashName: "[SHA256]")
    }

    public static func draw(digest: [UInt8], title: String, hashName: String) -> [String] {
        let symbols = Array(" .o+=*BOX@%&#/^SE".unicodeScalars)
        let width = 17, height = 9
        let len = symbols.count - 1
        var field = [[Int]](repeating: [Int](repeating: 0, count: height), count: width)
        var x = width / 2, y = height / 2
        for byte in digest {
            var input = byte
            for _ in 0..<4 {
                x += (input & 0x1) != 0 ? 1 : -1
                y += (input & 0x2) != 0 ? 1 : -1
                x = max(x, 0); y = max(y, 0)
                x = min(x, width - 1); y = min(y, height - 1)
                if field[x][y] < len - 2 { field[x][y] += 1 }
                input >>= 2
            }
        }
        field[width / 2][height / 2] = len - 1
        field[x][y] = len
        func frame(_ label: String) -> String {
            let inner = label.count > width ? String(label.prefix(width)) : label
            let left = (width - inner.count) / 2
            return "+" + String(repeating: "-", count: left) + inner
                + String(repeating: "-", count: width - inner.count - left) + "+"
        }
        var lines = [frame(title)]
        for row in 0..<height {
            var line = "|"
            for col in 0..<width { line.unicodeScalars.append(symbols[min(field[col][row], len)]) }
            lines.append(line + "|")
        }
        lines.append(frame(hashName))
        return lines
    }
}
