/// Reads the SSH wire encoding (RFC 4251 §5) from untrusted bytes.
///
/// Every read is bounds-checked and throws instead of trapping, because key
/// blobs come from remote servers and from files anyone may have edited.
public struct SSHWireReader: Sendable {
    public enum Failure: Error, Equatable, Sendable {
        case truncated
        case oversized(Int)
        /// A NUL byte inside a name (`readCString`).
        case embeddedNUL
    }

    private let bytes: [UInt8]
    public private(set) var offset: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
    }

    public var isAtEnd: Bool { offset >= bytes.count }
    public var remaining: Int { bytes.count - offset }

    public mutating func readUInt32() throws -> UInt32 {
        guard remaining >= 4 else { throw Failure.truncated }
        var value: UInt32 = 0
        for i in 0..<4 { value = value << 8 | UInt32(bytes[offset + i]) }
        offset += 4
        return value
    }

    public mutating func readUInt64() throws -> UInt64 {
        let high = try readUInt32()
        let low = try readUInt32()
        return UInt64(high) << 32 | UInt64(low)
    }

    public mutating func readByte() throws -> UInt8 {
        guard remaining >= 1 else { throw Failure.truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func readBytes(_ count: Int) throws -> [UInt8] {
        guard count >= 0, remaining >= count else { throw Failure.truncated }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A length-prefixed `string`; `limit` bounds what a hostile peer can make us allocate.
    public mutating func readString(limit: Int = 1 << 20) throws -> [UInt8] {
        let length = Int(try readUInt32())
        guard length <= limit else { throw Failure.oversized(length) }
        return try readBytes(length)
    }

    public mutating func readUTF8(limit: Int = 1 << 20) throws -> String {
        String(decoding: try readString(limit: limit), as: UTF8.self)
    }

    /// A name read as OpenSSH's `sshbuf_get_cstring` reads it: a NUL byte may only be the last
    /// byte, and ends the name there; one anywhere else is refused (`Failure.embeddedNUL`).
    public mutating func readCString(limit: Int = 1 << 20) throws -> String {
        var bytes = try readString(limit: limit)
        if let nul = bytes.firstIndex(of: 0) {
            guard nul == bytes.count - 1 else { throw Failure.embeddedNUL }
            bytes.removeLast()
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    public mutating func readBoolean() throws -> Bool { try readByte() != 0 }
}

/// Builds SSH wire-encoded byte strings.
public struct SSHWireWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// A writer that will not reallocate before `capacity` bytes.
    public init(capacity: Int) { bytes.reserveCapacity(capacity) }

    public mutating func writeUInt32(_ value: UInt32) {
        bytes.append(UInt8(value >> 24))
        bytes.append(UInt8(value >> 16 & 0xff))
        bytes.append(UInt8(value >> 8 & 0xff))
        bytes.append(UInt8(value & 0xff))
    }

    public mutating func writeUInt64(_ value: UInt64) {
        writeUInt32(UInt32(value >> 32))
        writeUInt32(UInt32(value & 0xffff_ffff))
    }

    public mutating func writeByte(_ value: UInt8) { bytes.append(value) }

    public mutating func writeRaw(_ value: [UInt8]) { bytes += value }

    public mutating func writeString(_ value: [UInt8]) {
        writeUInt32(UInt32(value.count))
        bytes += value
    }

    public mutating func writeString(_ value: String) { writeString(Array(value.utf8)) }

    /// An `mpint`: two's complement, big-endian, minimal, with a leading zero when the top bit is set.
    public mutating func writeMPInt(unsigned magnitude: [UInt8]) {
        var trimmed = ArraySlice(magnitude)
        while let first = trimmed.first, first == 0 { trimmed = trimmed.dropFirst() }
        var encoded = Array(trimmed)
        if let first = encoded.first, first & 0x80 != 0 { encoded.insert(0, at: 0) }
        writeString(encoded)
    }
}
