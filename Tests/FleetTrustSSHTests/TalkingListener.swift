import Foundation
import Glibc

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
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else {
            Glibc.close(fd)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
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

    func close() {
        let open = lock.withLock { () -> [Int32] in
            guard !closed else { return [] }
            closed = true
            defer { clients = [] }
            return clients
        }
        shutdown(fd, Int32(SHUT_RDWR))
        open.forEach { Glibc.close($0) }
    }

    deinit { close() }
}
