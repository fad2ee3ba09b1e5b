import Foundation
import Glibc
import Synchronization
@testable import FleetTrustSSH
import FleetTrustCore
import FleetTrustTestFleet

/// A man in the middle that tells `ssh` from other clients by its KEXINIT, before any server has
/// committed to a host key, and sends what it takes for `ssh` to a rogue server.
///
/// It speaks the real server's identification itself, then waits a moment for the client's
/// KEXINIT: `ssh` sends its own as soon as it has read the server's identification, and lists
/// the post-quantum hybrid first. A client that waits for the server's KEXINIT, or lists another
/// method first, goes to the real server; the relay then replays the client's bytes to the chosen
/// server (whose identically versioned identification line it drops) and copies both ways.
/// Hostile by nature, so a fake: no real server routes by the client's KEXINIT.
final class KexInitGateRelay {
    enum Gate: CaseIterable {
        /// Any client whose KEXINIT arrives before the server's.
        case early
        /// A client whose key exchange list starts with sntrup761x25519, as `ssh` 9.2's does.
        case hybridFirst
        /// A connection with no other from the client within the wait before or after it, as
        /// `ssh` opens one; a connection of a burst goes to the real server.
        case alone
    }

    private let server: ScriptedServer
    var port: Int { server.port }

    init(gate: Gate, realPort: Int, roguePort: Int, wait: Int32 = 500) throws {
        let identification = try Self.identification(port: realPort)
        let accepted = Mutex<[ContinuousClock.Instant]>([])
        server = try ScriptedServer { client in
            let arrived = ContinuousClock.now
            accepted.withLock { $0.append(arrived) }
            guard ScriptedServer.send(client, identification) else { return }
            var received: [UInt8] = []
            var opening: ClientOfferOnTheWireTests.Opening?
            var chunk = [UInt8](repeating: 0, count: 16_384)
            var side = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            let started = ContinuousClock.now
            while opening == nil, received.count < 65_536 {
                let left = wait - Int32((ContinuousClock.now - started).components.seconds * 1000
                                        + (ContinuousClock.now - started).components.attoseconds / 1_000_000_000_000_000)
                guard left > 0, poll(&side, 1, left) > 0 else { break }
                let count = read(client, &chunk, chunk.count)
                guard count > 0 else { return }
                received += chunk[0..<count]
                opening = ClientOfferOnTheWireTests.opening(received)
            }
            let window = Duration.milliseconds(Int(wait))
            if gate == .alone { Thread.sleep(forTimeInterval: Double(wait) / 1000) }
            let toRogue = switch gate {
            case .early: opening != nil
            case .hybridFirst: opening?.lists[KexInit.List.keyExchange.rawValue].first?.hasPrefix("sntrup761x25519") == true
            case .alone: accepted.withLock { times in times.filter { $0 != arrived && abs(($0 - arrived) / window) <= 1 }.isEmpty }
            }
            guard let backend = Loopback.connectedSocket(port: toRogue ? roguePort : realPort) else { return }
            defer { Glibc.close(backend) }
            guard Self.readLine(backend) != nil, ScriptedServer.send(backend, received) else { return }
            ClientOfferOnTheWireTests.relay(client, backend)
        }
    }

    func close() { server.close() }

    /// The real server's identification line (with its CR LF), read from one connection.
    private static func identification(port: Int) throws -> [UInt8] {
        guard let fd = Loopback.connectedSocket(port: port) else { throw POSIXError(.ECONNREFUSED) }
        defer { Glibc.close(fd) }
        guard let line = readLine(fd) else { throw POSIXError(.EPROTO) }
        return line
    }

    /// One line (up to 255 bytes and its LF), byte by byte so nothing after it is consumed.
    private static func readLine(_ fd: Int32) -> [UInt8]? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 256, read(fd, &byte, 1) == 1 {
            line.append(byte)
            if byte == 0x0a { return line }
        }
        return nil
    }
}
