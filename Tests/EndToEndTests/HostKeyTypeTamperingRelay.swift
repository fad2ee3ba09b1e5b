import Foundation
import Glibc
import Synchronization
import FleetTrustTestFleet

/// A man in the middle in front of one real sshd that spoils exactly the connections whose
/// client offers one host-key type first, and passes every other connection untouched.
///
/// A real sshd never fails one key type's exchange on its own, but a broken path or a tampering
/// relay can: this is how a scan meets a host whose key `ssh` meets is proved while another key
/// type's connection fails. The choice is made on what the client's KEXINIT offers, so it is
/// deterministic: `ssh`'s connection (and the probe's connection shaped like it) lists Ed25519
/// first and passes, a connection asking for one other type is spoiled every time. Up to NEWKEYS
/// the packets are plaintext, so the relay can read the client's offer and touch the server's
/// reply without breaking the framing.
final class HostKeyTypeTamperingRelay: @unchecked Sendable {
    enum Tampering: Sendable {
        /// Copies both ways: the relay itself must not cost a key.
        case none
        /// Flips the last byte of the server's key-exchange reply (message 31: its last field is
        /// the signature over the exchange hash), so the signature no longer verifies.
        case flipReplySignature
        /// Closes both sides once the client's KEXINIT has arrived (kept from the server) and the
        /// server's KEXINIT has reached the client: the server never replies.
        case close
    }

    /// One connection the relay carried: the client's first host-key algorithm (nil when no
    /// KEXINIT was read) and whether it was spoiled.
    struct Connection: Sendable {
        var firstHostKeyAlgorithm: String?
        var spoiled: Bool
    }

    let port: Int
    private let listener: Int32
    private let tampering: Tampering
    private let spoiledPrefix: String
    private let backendPort: Int
    private let open = Mutex<(closed: Bool, sockets: Set<Int32>)>((false, []))
    private let carried = Mutex<[Int: Connection]>([:])
    /// Connections whose server's KEXINIT has reached the client.
    private let serverOffered = Mutex<Set<Int>>([])
    private let running = DispatchGroup()

    /// `spoiledPrefix`: connections whose client's host-key list starts with it are spoiled.
    init(backendPort: Int, tampering: Tampering, spoiledPrefix: String) throws {
        (listener, port) = try Loopback.listeningSocket(backlog: 128)
        self.backendPort = backendPort
        self.tampering = tampering
        self.spoiledPrefix = spoiledPrefix
        running.enter()
        Thread.detachNewThread { [self] in
            var number = 0
            while case let client = accept(listener, nil, nil), client >= 0 {
                let connection = number
                number += 1
                running.enter()
                Thread.detachNewThread { [self] in
                    carry(client, connection)
                    running.leave()
                }
            }
            running.leave()
        }
    }

    /// The connections carried so far, in order of arrival.
    var connections: [Connection] { carried.withLock { $0.sorted { $0.key < $1.key }.map(\.value) } }

    /// Stops listening, shuts every open connection and waits for their threads. Idempotent.
    func close() {
        let sockets = open.withLock { state -> Set<Int32>? in
            guard !state.closed else { return nil }
            state.closed = true
            return state.sockets
        }
        guard let sockets else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        sockets.forEach { shutdown($0, Int32(SHUT_RDWR)) }
        _ = running.wait(timeout: .now() + 10)
        Glibc.close(listener)
    }

    deinit { close() }

    private func carry(_ client: Int32, _ number: Int) {
        defer { Glibc.close(client) }
        guard let server = Loopback.connectedSocket(port: backendPort) else { return }
        defer { Glibc.close(server) }
        let admitted = open.withLock { state -> Bool in
            if !state.closed { state.sockets.formUnion([client, server]) }
            return !state.closed
        }
        guard admitted else { return }
        defer { open.withLock { $0.sockets.subtract([client, server]) } }
        carried.withLock { $0[number] = Connection(firstHostKeyAlgorithm: nil, spoiled: false) }
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread { [self] in
            serverToClient(server, client, number)
            shutdown(client, Int32(SHUT_WR))
            done.leave()
        }
        clientToServer(client, server, number)
        shutdown(server, Int32(SHUT_WR))
        done.wait()
    }

    /// Copies the client's bytes, reading its KEXINIT on the way; the decision is recorded before
    /// the KEXINIT goes on, so it is known before the server can answer it. A connection to close
    /// keeps its KEXINIT: the server's identification and KEXINIT reach the client first, so it
    /// is closed in the key exchange, not taken for a server shedding load before it identified.
    private func clientToServer(_ client: Int32, _ server: Int32, _ number: Int) {
        var opening: [UInt8]? = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while case let count = read(client, &chunk, chunk.count), count > 0 {
            if var received = opening {
                received += chunk[0..<count]
                opening = received.count > 65_536 ? nil : received
                if let offered = Self.hostKeyAlgorithms(received) {
                    opening = nil
                    let spoiled = tampering != .none && offered.first?.hasPrefix(spoiledPrefix) == true
                    carried.withLock { $0[number] = Connection(firstHostKeyAlgorithm: offered.first, spoiled: spoiled) }
                    if spoiled && tampering == .close {
                        let identification = received.firstIndex(of: 0x0a)! + 1
                        let sent = received.count - count
                        guard sent >= identification || Self.send(server, received[sent..<identification]) else { return }
                        let deadline = ContinuousClock.now + .seconds(10)
                        while !serverOffered.withLock({ $0.contains(number) }), ContinuousClock.now < deadline { usleep(1_000) }
                        shutdown(client, Int32(SHUT_RDWR))
                        shutdown(server, Int32(SHUT_RDWR))
                        return
                    }
                }
            }
            guard Self.send(server, chunk[0..<count]) else { return }
        }
    }

    /// Copies the server's bytes, reading its plaintext packets: notes when its KEXINIT has gone
    /// on, and on a spoiled connection of `flipReplySignature` flips the last payload byte of its
    /// first message 31. Past NEWKEYS (or that flip) it only copies.
    private func serverToClient(_ server: Int32, _ client: Int32, _ number: Int) {
        var pending: [UInt8] = []
        var plaintext = tampering != .none
        var identified = false
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while case let count = read(server, &chunk, chunk.count), count > 0 {
            guard plaintext else {
                guard Self.send(client, chunk[0..<count]) else { return }
                continue
            }
            pending += chunk[0..<count]
            var ready = 0
            var offered = false
            while !identified, let newline = pending[ready...].firstIndex(of: 0x0a) {
                identified = pending[ready...].starts(with: Array("SSH-".utf8))
                ready = newline + 1
            }
            while identified, plaintext, pending.count - ready >= 6 {
                let length = pending[ready..<(ready + 4)].reduce(0) { $0 << 8 | Int($1) }
                let padding = Int(pending[ready + 4])
                guard length <= 262_144, length > padding else {
                    plaintext = false
                    break
                }
                guard pending.count - ready >= 4 + length else { break }
                switch pending[ready + 5] {
                case 20:
                    offered = true
                case 31 where tampering == .flipReplySignature && carried.withLock({ $0[number]?.spoiled == true }):
                    pending[ready + 3 + length - padding] ^= 0x01
                    plaintext = false
                case 21:
                    plaintext = false
                default:
                    break
                }
                ready += 4 + length
            }
            if !plaintext { ready = pending.count }
            guard Self.send(client, pending[..<ready]) else { return }
            pending.removeFirst(ready)
            if offered { serverOffered.withLock { _ = $0.insert(number) } }
        }
    }

    /// Sends every byte (blocking); false once the peer is gone.
    private static func send(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// The host-key algorithms of the client's KEXINIT (after its identification line), once the
    /// whole packet has arrived; nil before, or when the first packet is not a KEXINIT.
    static func hostKeyAlgorithms(_ bytes: [UInt8]) -> [String]? {
        guard let newline = bytes.firstIndex(of: 0x0a) else { return nil }
        let packet = bytes[(newline + 1)...]
        guard packet.count >= 6 else { return nil }
        let start = packet.startIndex
        let length = packet[start..<(start + 4)].reduce(0) { $0 << 8 | Int($1) }
        guard packet.count >= 4 + length, packet[start + 5] == 20 else { return nil }
        var offset = start + 5 + 17
        var lists: [String] = []
        for _ in 0..<2 {
            guard offset + 4 <= start + 4 + length else { return nil }
            let size = packet[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            guard offset + 4 + size <= start + 4 + length else { return nil }
            lists.append(String(decoding: packet[(offset + 4)..<(offset + 4 + size)], as: UTF8.self))
            offset += 4 + size
        }
        return lists[1].split(separator: ",").map(String.init)
    }
}
