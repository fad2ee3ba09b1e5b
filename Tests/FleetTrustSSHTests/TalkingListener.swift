import Foundation
import Glibc
import FleetTrustTestFleet

/// A loopback TCP server that greets every client with fixed bytes and then stays silent:
/// the "speaks another protocol" case (an SMTP or FTP server on the SSH port).
final class TalkingListener: @unchecked Sendable {
    let port: Int
    private let fd: Int32
    private let greeting: [UInt8]
    private let lock = NSLock()
    private var clients: [Int32] = []
    private var closed = false

    init(greeting: String) throws {
        self.greeting = Array(greeting.utf8)
        (fd, port) = try Loopback.listeningSocket(backlog: 64)
        Thread.detachNewThread { [self] in serve() }
    }

    private func serve() {
        while true {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            _ = greeting.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            let keep = lock.withLock { () -> Bool in
                if !closed { clients.append(client) }
                return !closed
            }
            if !keep { Glibc.close(client) }
        }
    }

    /// Idempotent: `deinit` calls it again after a test's own `close`; shutting the listener's
    /// number down twice could hit a socket that has taken the number since.
    func close() {
        let open = lock.withLock { () -> [Int32]? in
            guard !closed else { return nil }
            closed = true
            defer { clients = [] }
            return clients
        }
        guard let open else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        open.forEach { Glibc.close($0) }
    }

    deinit { close() }
}
