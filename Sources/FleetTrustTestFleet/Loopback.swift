import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Loopback socket helpers for the test fleet: free ports, readiness, silent listeners.
public enum Loopback {
    /// A port that was free on `address` a moment ago (the kernel's choice for port 0).
    public static func freePort(address: String = "127.0.0.1") throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFleetError.noFreePort }
        defer { close(fd) }
        var addr = sockaddr_in(address: address, port: 0)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw TestFleetError.noFreePort }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// Whether something accepts TCP connections on `address:port` now.
    public static func accepts(address: String, port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in(address: address, port: port)
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
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
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw TestFleetError.noFreePort }
        var one: Int32 = 1
        setsockopt(socketFD, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in(address: address, port: port)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, length) == 0 && listen(socketFD, 1024) == 0 && getsockname(socketFD, $0, &length) == 0
            }
        }
        guard ok else {
            Glibc.close(socketFD)
            throw TestFleetError.noFreePort
        }
        self.fd = socketFD
        self.address = address
        self.port = Int(UInt16(bigEndian: addr.sin_port))
    }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }
}
