import Foundation
import Glibc
import FleetTrustTestFleet

/// A loopback TCP server that runs `script` on its own thread for every client: the hostile
/// network and the hostile server of the engine's attack tests, written in the test itself.
/// `close` ends it: the listener and every client still open are shut down, and each script's
/// next write fails, so every thread it started ends.
final class ScriptedServer: @unchecked Sendable {
    let port: Int
    private let fd: Int32
    private let script: @Sendable (Int32) -> Void
    private let lock = NSLock()
    private var clients: Set<Int32> = []
    private var closed = false
    private let running = DispatchGroup()

    init(_ script: @escaping @Sendable (_ client: Int32) -> Void) throws {
        self.script = script
        (fd, port) = try Loopback.listeningSocket(backlog: 256)
        running.enter()
        Thread.detachNewThread { [self] in
            serve()
            running.leave()
        }
    }

    private func serve() {
        while true {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            let kept = lock.withLock { () -> Bool in
                if !closed { clients.insert(client) }
                return !closed
            }
            guard kept else {
                Glibc.close(client)
                continue
            }
            running.enter()
            Thread.detachNewThread { [self] in
                script(client)
                lock.withLock { _ = clients.remove(client) }
                Glibc.close(client)
                running.leave()
            }
        }
    }

    /// Idempotent: `deinit` calls it again, often after a test's own `close`, when the listener's
    /// number may already belong to the next test's socket; a second `close(fd)` would shut that.
    func close() {
        let open = lock.withLock { () -> Set<Int32>? in
            guard !closed else { return nil }
            closed = true
            return clients
        }
        guard let open else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        open.forEach { shutdown($0, Int32(SHUT_RDWR)) }
        _ = running.wait(timeout: .now() + 10)
        Glibc.close(fd)
    }

    deinit { close() }

    // MARK: What scripts say

    /// Sends every byte (blocking); false once the client is gone.
    @discardableResult
    static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Reads until the client closes or fails.
    static func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while recv(fd, &buffer, buffer.count, 0) > 0 {}
    }

    /// An SSH binary packet around `payload` (padding to a multiple of 8, at least 4 bytes).
    static func packet(_ payload: [UInt8]) -> [UInt8] {
        var padding = 8 - (5 + payload.count) % 8
        if padding < 4 { padding += 8 }
        let length = UInt32(1 + payload.count + padding)
        return withUnsafeBytes(of: length.bigEndian, Array.init) + [UInt8(padding)] + payload + [UInt8](repeating: 0, count: padding)
    }

    /// SSH_MSG_IGNORE carrying `size` bytes.
    static func ignore(_ size: Int) -> [UInt8] {
        packet([2] + withUnsafeBytes(of: UInt32(size).bigEndian, Array.init) + [UInt8](repeating: 0x69, count: size))
    }
}
