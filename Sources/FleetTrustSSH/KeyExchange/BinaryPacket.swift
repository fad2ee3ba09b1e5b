import COpenSSL
import FleetTrustCore

/// The binary packet of RFC 4253 §6 before any keys are in use: no encryption, no MAC.
///
/// This client disconnects before NEWKEYS, so it never needs more; sizes are bounded because the
/// peer is untrusted.
enum BinaryPacket {
    /// `PACKET_MAX_SIZE` of OpenSSH's packet.c.
    static let maximumLength = 256 * 1024

    enum Message: UInt8 {
        case disconnect = 1, ignore = 2, unimplemented = 3, debug = 4
        case kexInit = 20
    }

    /// `payload` framed as `ssh` frames it before any cipher is in use (packet.c,
    /// `ssh_packet_send2_wrapped`): at least 4 bytes of padding, the total a multiple of 8, and the
    /// padding zeroed (random padding is only for encrypted packets), so our packets are `ssh`'s
    /// byte for byte.
    /// Written into one buffer of the packet's final size (a KEXINIT grew one from empty through
    /// seven reallocations).
    static func frame(_ payload: [UInt8]) -> [UInt8] {
        var padding = 8 - (5 + payload.count) % 8
        if padding < 4 { padding += 8 }
        let length = 1 + payload.count + padding
        var writer = SSHWireWriter(capacity: 4 + length)
        writer.writeUInt32(UInt32(length))
        writer.writeByte(UInt8(padding))
        writer.writeRaw(payload)
        for _ in 0..<padding { writer.writeByte(0) }
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
        let length = header.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        let padding = Int(header[header.startIndex + 4])
        // packet.c (`ssh_packet_read_poll2`): a length up to PACKET_MAX_SIZE, at least 4 bytes of
        // padding, and a message type left after the padding.
        guard length <= maximumLength, padding >= 4, padding + 1 < length else {
            throw KeyExchangeFailures.kexFailed("malformed packet (length \(length), padding \(padding))")
        }
        // A length that with its field is no multiple of the block size (8 before any cipher) is
        // fatal only after `ssh_packet_start_discard` has read PACKET_MAX_SIZE - 8 more bytes, so
        // a server that closes first is a closed connection, as for `ssh`.
        guard (4 + length) % 8 == 0 else {
            guard buffer.count >= maximumLength - 8 else { return nil }
            throw KeyExchangeFailures.kexFailed("malformed packet (length \(length) is no multiple of the block size)")
        }
        guard buffer.count >= 4 + length else { return nil }
        return buffer.take(5..<(4 + length - padding), of: 4 + length)
    }

    /// The next message that matters, as OpenSSH's `ssh_packet_read_poll_seqnr` (packet.c) hands
    /// it on: IGNORE, DEBUG and UNIMPLEMENTED are skipped (if well formed) unless the key exchange
    /// is `strict` (kex-strict), where every packet counts; DISCONNECT fails, and so does a
    /// message type 0 or from 254 on ("Invalid ssh2 packet type"). Nil while it has not fully arrived.
    static func takeMessage(from buffer: inout ReceiveBuffer, stage: ProbeStage, strict: Bool = false) throws(ProbeFailure) -> [UInt8]? {
        var skipped = 0
        return try takeMessage(from: &buffer, stage: stage, strict: strict, skipped: &skipped)
    }

    /// `takeMessage`, counting in `skipped` the packets it skipped (kex-strict counts every packet).
    static func takeMessage(from buffer: inout ReceiveBuffer, stage: ProbeStage, strict: Bool,
                            skipped: inout Int) throws(ProbeFailure) -> [UInt8]? {
        while let payload = try takePayload(from: &buffer) {
            switch strict && payload[0] != Message.disconnect.rawValue ? nil : Message(rawValue: payload[0]) {
            case .ignore, .debug, .unimplemented:
                var reader = SSHWireReader(Array(payload.dropFirst()))
                let wellFormed = switch Message(rawValue: payload[0]) {
                case .debug: (try? reader.readByte()) != nil && (try? reader.readString()) != nil && (try? reader.readString()) != nil
                case .unimplemented: (try? reader.readUInt32()) != nil
                default: true
                }
                guard wellFormed else { throw KeyExchangeFailures.kexFailed("malformed message \(payload[0])") }
                skipped += 1
                continue
            case .disconnect:
                var reader = SSHWireReader(Array(payload.dropFirst()))
                let reason = (try? reader.readUInt32()) ?? 0
                let description = (try? reader.readString(limit: 1024)) ?? []
                throw KeyExchangeFailures.disconnected(reason: reason, description: description, stage: stage)
            default:
                guard payload[0] != 0 && payload[0] < 254 else {
                    throw KeyExchangeFailures.kexFailed("invalid packet type \(payload[0])")
                }
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
