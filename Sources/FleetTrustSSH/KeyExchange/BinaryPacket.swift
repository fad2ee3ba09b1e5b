import COpenSSL
import FleetTrustCore

/// The binary packet of RFC 4253 §6 before any keys are in use: no encryption, no MAC.
///
/// This client disconnects before NEWKEYS, so it never needs more; sizes are bounded because the
/// peer is untrusted.
enum BinaryPacket {
    static let maximumLength = 256 * 1024

    enum Message: UInt8 {
        case disconnect = 1, ignore = 2, unimplemented = 3, debug = 4
        case kexInit = 20
        case kexECDHInit = 30, kexECDHReply = 31
    }

    /// `payload` framed with random padding (at least 4 bytes, total a multiple of 8).
    static func frame(_ payload: [UInt8]) -> [UInt8] {
        var padding = 8 - (5 + payload.count) % 8
        if padding < 4 { padding += 8 }
        var writer = SSHWireWriter()
        writer.writeUInt32(UInt32(1 + payload.count + padding))
        writer.writeByte(UInt8(padding))
        writer.writeRaw(payload)
        writer.writeRaw(randomBytes(padding))
        return writer.bytes
    }

    /// `count` random bytes from OpenSSL's generator: one call in user space, where asking the
    /// system generator byte by byte cost a system call each.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        if RAND_bytes(&bytes, Int32(count)) != 1 {
            var generator = SystemRandomNumberGenerator()
            for index in bytes.indices { bytes[index] = generator.next() }
        }
        return bytes
    }

    /// The next packet's payload, nil while the packet has not fully arrived.
    static func takePayload(from buffer: inout ReceiveBuffer) throws(ProbeFailure) -> [UInt8]? {
        guard let header = buffer.peek(5) else { return nil }
        var reader = SSHWireReader(Array(header))
        let length = Int((try? reader.readUInt32()) ?? 0)
        let padding = Int((try? reader.readByte()) ?? 0)
        guard length <= maximumLength, padding >= 4, padding + 1 < length else {
            throw KeyExchangeFailures.kexFailed("malformed packet (length \(length), padding \(padding))")
        }
        guard buffer.count >= 4 + length else { return nil }
        return buffer.take(5..<(4 + length - padding), of: 4 + length)
    }

    /// The next message that matters, skipping IGNORE, DEBUG and UNIMPLEMENTED; DISCONNECT
    /// fails; nil while it has not fully arrived.
    static func takeMessage(from buffer: inout ReceiveBuffer, stage: ProbeStage) throws(ProbeFailure) -> [UInt8]? {
        while let payload = try takePayload(from: &buffer) {
            switch Message(rawValue: payload[0]) {
            case .ignore, .debug, .unimplemented:
                continue
            case .disconnect:
                var reader = SSHWireReader(Array(payload.dropFirst()))
                let reason = (try? reader.readUInt32()) ?? 0
                let description = (try? reader.readString(limit: 1024)) ?? []
                throw KeyExchangeFailures.disconnected(reason: reason, description: description, stage: stage)
            default:
                return payload
            }
        }
        return nil
    }

    /// SSH_MSG_DISCONNECT with reason 11, "disconnected by application".
    static let goodbye: [UInt8] = {
        var writer = SSHWireWriter()
        writer.writeByte(Message.disconnect.rawValue)
        writer.writeUInt32(11)
        writer.writeString("host key fetched")
        writer.writeString("")
        return frame(writer.bytes)
    }()
}
