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

    /// Whether process `pid` holds a socket listening on `address:port` (IPv4), read from /proc.
    /// `accepts` alone cannot tell a server is the one we started: a port chosen free a moment
    /// ago may be taken by another test's server before ours binds it; ours then exits (or, with
    /// several addresses, listens on the others) and the other one answers there with its keys.
    public static func isListening(pid: pid_t, address: String, port: Int) -> Bool {
        var binary = in_addr()
        // Read to the end: /proc gives a page per read, which a reader taking a short read for
        // the end (as `String(contentsOfFile:)` does here) cuts off.
        guard inet_pton(AF_INET, address, &binary) == 1,
              let data = try? FileHandle(forReadingAtPath: "/proc/net/tcp")?.readToEnd() else { return false }
        let table = String(decoding: data, as: UTF8.self)
        let local = String(format: "%08X:%04X", binary.s_addr, port)
        let listening = Set(table.split(separator: "\n").dropFirst().compactMap { line -> String? in
            let fields = line.split(separator: " ")
            // sl, local_address, rem_address, st (0A: LISTEN), …, inode (the tenth field).
            guard fields.count > 9, fields[1] == local, fields[3] == "0A" else { return nil }
            return "socket:[\(fields[9])]"
        })
        guard !listening.isEmpty,
              let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return false }
        return descriptors.contains { listening.contains((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) ?? "") }
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
