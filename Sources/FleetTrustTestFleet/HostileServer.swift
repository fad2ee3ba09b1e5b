import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Misbehaving "SSH servers" for the hardening tests, each meant to run as its own process
/// (`testfleet hostile --behavior NAME`) on 127.0.0.1.
///
/// Every behaviour is bounded: the server stops by itself after `lifetime` seconds, and
/// nothing it sends is unbounded in time.
public enum HostileBehavior: String, CaseIterable, Sendable {
    /// Accepts and never says a word.
    case silent
    /// Sends a valid identification string one byte per second.
    case slowBanner = "slow-banner"
    /// Sends megabytes of lines before (never) identifying itself.
    case preBannerFlood = "pre-banner-flood"
    /// Sends `SSH-2.0-` followed by an endless line with no newline.
    case endlessBanner = "endless-banner"
    /// Identifies itself correctly, then sends random bytes.
    case garbageAfterBanner = "garbage-after-banner"
    /// Identifies itself, reads the client's KEXINIT, sends a truncated packet and closes.
    case closeDuringKex = "close-during-kex"
    /// An identification string and pre-banner lines full of terminal escape sequences and
    /// invalid UTF-8, then garbage.
    case escapeBanner = "escape-banner"
    /// Speaks HTTP, not SSH.
    case http

    /// The identification string of `escapeBanner`: screen clear, OSC 52 clipboard write,
    /// title change, a bell and bytes that are not UTF-8.
    public static let escapeVersion: [UInt8] = Array("SSH-2.0-Evil\u{1b}[2J\u{1b}]52;c;cm0gLXJmIH4=\u{07}\u{1b}]0;pwned\u{07}".utf8) + [0xff, 0xfe, 0x0d, 0x0a]
}

public final class HostileServer: @unchecked Sendable {
    public let behavior: HostileBehavior
    public let port: Int
    private let listener: Int32

    public init(_ behavior: HostileBehavior, port: Int = 0) throws {
        self.behavior = behavior
        (listener, self.port) = try Loopback.listeningSocket(port: port, backlog: 256)
    }

    /// Accepts connections until `lifetime` seconds have passed, serving each on its own thread.
    public func serve(lifetime: TimeInterval) {
        let deadline = Date().addingTimeInterval(lifetime)
        while Date() < deadline {
            var pfd = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 200) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let behavior = self.behavior
            Thread.detachNewThread {
                HostileServer.handle(client, behavior, until: deadline)
                Glibc.close(client)
            }
        }
        Glibc.close(listener)
    }

    private static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    private static func send(_ fd: Int32, _ text: String) -> Bool { send(fd, Array(text.utf8)) }

    /// Reads what the client sends for up to `seconds`, returning it (bounded to 64 KiB).
    private static func drain(_ fd: Int32, seconds: Double) -> [UInt8] {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline && received.count < 65536 {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) > 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received += buffer[0..<n]
            if received.count > 64 { break }
        }
        return received
    }

    private static func handle(_ fd: Int32, _ behavior: HostileBehavior, until deadline: Date) {
        switch behavior {
        case .silent:
            while Date() < deadline && !peerClosed(fd) { usleep(100_000) }
        case .slowBanner:
            for byte in Array("SSH-2.0-OpenSSH_9.2p1 SlowServer\r\n".utf8) {
                guard Date() < deadline, send(fd, [byte]) else { return }
                sleep(1)
            }
            while Date() < deadline && !peerClosed(fd) { usleep(100_000) }
        case .preBannerFlood:
            let line = Array("this is not a banner, it is a very long pre-banner line of junk text...\r\n".utf8)
            var chunk: [UInt8] = []
            for _ in 0..<100 { chunk += line }
            var sent = 0
            while Date() < deadline && sent < 64 << 20 {
                guard send(fd, chunk) else { return }
                sent += chunk.count
            }
        case .endlessBanner:
            guard send(fd, "SSH-2.0-") else { return }
            let chunk = [UInt8](repeating: UInt8(ascii: "A"), count: 8192)
            var sent = 0
            while Date() < deadline && sent < 64 << 20 {
                guard send(fd, chunk) else { return }
                sent += chunk.count
            }
        case .garbageAfterBanner:
            guard send(fd, "SSH-2.0-OpenSSH_9.2p1 Garbage\r\n") else { return }
            _ = drain(fd, seconds: 0.5)
            var generator = SystemRandomNumberGenerator()
            for _ in 0..<64 {
                let junk = (0..<1024).map { _ in UInt8.random(in: 0...255, using: &generator) }
                guard Date() < deadline, send(fd, junk) else { return }
            }
            while Date() < deadline && !peerClosed(fd) { usleep(100_000) }
        case .closeDuringKex:
            guard send(fd, "SSH-2.0-OpenSSH_9.2p1 Closer\r\n") else { return }
            _ = drain(fd, seconds: 1)
            // The start of a KEXINIT packet that never completes.
            _ = send(fd, [0, 0, 4, 0, 10, 20] + [UInt8](repeating: 7, count: 16))
        case .escapeBanner:
            _ = send(fd, Array("\u{1b}[2J\u{1b}[H\u{1b}]0;owned title\u{07}pre-banner \u{1b}[31mred\r\n".utf8) + [0xc3, 0x28, 0x0d, 0x0a])
            guard send(fd, HostileBehavior.escapeVersion) else { return }
            _ = drain(fd, seconds: 0.5)
            _ = send(fd, [0, 0, 0, 12, 4, 1, 0x1b, 0x5b, 0x32, 0x4a, 0, 0, 0, 0, 0, 0])
        case .http:
            _ = drain(fd, seconds: 0.3)
            _ = send(fd, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
    }

    private static func peerClosed(_ fd: Int32) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, 0) > 0 else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0
    }
}
