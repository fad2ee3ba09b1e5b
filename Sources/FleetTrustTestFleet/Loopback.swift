import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Loopback socket helpers for the test fleet: free ports, readiness, silent listeners.
public enum Loopback {
    /// A port that was free on `address` a moment ago (the kernel's choice for port 0).
    public static func freePort(address: String = "127.0.0.1") throws -> Int {
        let (fd, port) = try listeningSocket(address: address, backlog: 1)
        close(fd)
        return port
    }

    /// A TCP socket bound to `address:port` (0: the kernel's choice) and listening, with the
    /// port it got. The caller owns the descriptor.
    public static func listeningSocket(address: String = "127.0.0.1", port: Int = 0,
                                       backlog: Int32) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFleetError.noFreePort }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in(address: address, port: port)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, backlog) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else {
            close(fd)
            throw TestFleetError.noFreePort
        }
        return (fd, Int(UInt16(bigEndian: addr.sin_port)))
    }

    /// A blocking TCP socket connected to `address:port`, or nil when nothing accepts there.
    /// The caller owns the descriptor.
    public static func connectedSocket(address: String = "127.0.0.1", port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var addr = sockaddr_in(address: address, port: port)
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
        guard connected else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Whether something accepts TCP connections on `address:port` now.
    public static func accepts(address: String, port: Int) -> Bool {
        guard let fd = connectedSocket(address: address, port: port) else { return false }
        close(fd)
        return true
    }
}

extension sockaddr_in {
    init(address: String, port: Int) {
        self.init()
        sin_family = sa_family_t(AF_INET)
        sin_port = in_port_t(UInt16(port)).bigEndian
        inet_pton(AF_INET, address, &sin_addr)
    }
}

/// A TCP port that accepts connections (the kernel completes the handshake from the
/// listen backlog) and never says a word: the "silent host" of the failure tests.
public final class SilentListener: @unchecked Sendable {
    public let address: String
    public let port: Int
    private var fd: Int32

    public init(address: String = "127.0.0.1", port: Int = 0) throws {
        (fd, self.port) = try Loopback.listeningSocket(address: address, port: port, backlog: 1024)
        self.address = address
    }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }
}
