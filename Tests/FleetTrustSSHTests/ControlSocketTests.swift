import Foundation
import Glibc
import XCTest
@testable import FleetTrustSSH

/// Our client of ssh's multiplexing protocol against a fake master on a Unix socket, for what a
/// real master never does (a wrong version, an oversized answer, silence) and to read the request
/// byte by byte. A real master is what the bastion tests use (BastionRouteTests).
final class ControlSocketTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "ft-mux-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// What the fake master does once it has read the request and the two descriptors.
    private enum Answer {
        case open
        case refuse(String)
        case oversized
        case silent
    }

    /// What the fake master received.
    private final class Received: @unchecked Sendable {
        var request: [UInt8] = []
        var descriptors: [Int32] = []
        let done = DispatchSemaphore(value: 0)
    }

    /// A master that greets with `version`, reads one request and two descriptors, and answers.
    private func fakeMaster(version: UInt32 = 4, answer: Answer) -> (path: String, received: Received) {
        let path = directory + "/m"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0)
        listen(listener, 4)
        let received = Received()
        Thread {
            defer { close(listener); received.done.signal() }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            defer { close(client) }
            Self.write(client, Self.framed(Self.u32(1) + Self.u32(version)))
            guard let hello = Self.readPacket(client), hello.count == 8, let request = Self.readPacket(client) else { return }
            received.request = request
            for _ in 0..<2 { if let fd = Self.receiveDescriptor(client) { received.descriptors.append(fd) } }
            let id = Array(request[4..<8])
            switch answer {
            case .open:
                Self.write(client, Self.framed(Self.u32(0x8000_0006) + id + Self.u32(7)))
                if let fd = received.descriptors.first { Self.write(fd, Array("SSH-2.0-fake\r\n".utf8)) }
                // The master's behaviour, not a wait: it keeps the session a moment, as a real one does.
                usleep(300_000)
            case .refuse(let reason):
                Self.write(client, Self.framed(Self.u32(0x8000_0003) + id + Self.u32(UInt32(reason.utf8.count)) + Array(reason.utf8)))
            case .oversized:
                Self.write(client, Self.u32(1 << 30) + [0, 0, 0, 0])
            case .silent:
                // The behaviour under test, not a wait: a master that never answers, past the client's deadline.
                usleep(1_500_000)
            }
        }.start()
        return (path, received)
    }

    private func forward(to path: String, deadline: Duration = .seconds(3), cancellation: ProbeCancellation = ProbeCancellation(),
                         accepted: () -> Void = {}) -> (Result<ControlSocket, ControlSocket.Failure>, ours: Int32) {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        defer { close(pair[1]) }
        do throws(ControlSocket.Failure) {
            let control = try ControlSocket(path: path, deadline: .now + deadline)
            try control.openForward(host: "web1.example", port: 2222, descriptor: pair[1], deadline: .now + deadline,
                                    cancellation: cancellation, accepted: accepted)
            return (.success(control), pair[0])
        } catch {
            return (.failure(error), pair[0])
        }
    }

    func testTheRequestCarriesHostAndPortAsValuesAndTheChannelIsRelayedThroughThePassedDescriptor() throws {
        let (path, received) = fakeMaster(answer: .open)
        let (result, ours) = forward(to: path)
        defer { close(ours) }
        // The channel lives as long as the control connection: held until the test has read.
        let control = try result.get()
        defer { withExtendedLifetime(control) {} }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(ours, &buffer, buffer.count)
        XCTAssertEqual(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self), "SSH-2.0-fake\r\n",
                       "what the master writes to the descriptor it was given reaches the probe's end")
        received.done.wait()
        let expected = Self.u32(0x1000_0008) + Array(received.request[4..<8]) + Self.u32(0)
            + Self.u32(12) + Array("web1.example".utf8) + Self.u32(2222)
        XCTAssertEqual(received.request, expected, "MUX_C_NEW_STDIO_FWD, request id, empty reserved string, host, port")
        XCTAssertEqual(received.descriptors.count, 2, "standard input and output, passed one by one")
        received.descriptors.forEach { close($0) }
    }

    func testARefusalCarriesTheMastersReason() throws {
        let (path, received) = fakeMaster(answer: .refuse("Session open refused by peer"))
        let (result, ours) = forward(to: path)
        close(ours)
        XCTAssertEqual(result.failure, .refused("Session open refused by peer"))
        received.done.wait()
        received.descriptors.forEach { close($0) }
    }

    func testAnOversizedAnswerOrAnotherVersionIsRefusedWithoutTrustingIt() throws {
        for (version, answer) in [(4, Answer.oversized), (3, Answer.open)] as [(UInt32, Answer)] {
            let (path, received) = fakeMaster(version: version, answer: answer)
            var accepted = 0
            let (result, ours) = forward(to: path) { accepted += 1 }
            close(ours)
            XCTAssertEqual(accepted, version == 4 ? 1 : 0, "only a greeting in our version counts as accepted")
            guard case .unreachable? = result.failure else { return XCTFail("version \(version): \(result)") }
            received.done.wait()
            received.descriptors.forEach { close($0) }
            unlink(path)
        }
    }

    func testASilentMasterTimesOutAndACancelledProbeStopsWaitingAtOnce() throws {
        let (path, received) = fakeMaster(answer: .silent)
        let started = ContinuousClock.now
        var accepted = 0
        let (result, ours) = forward(to: path, deadline: .milliseconds(400)) { accepted += 1 }
        close(ours)
        XCTAssertEqual(result.failure, .timedOut)
        XCTAssertEqual(accepted, 1, "the master greeted (accepted) the connection before it fell silent")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(1))
        received.done.wait()
        unlink(path)

        let (again, second) = fakeMaster(answer: .silent)
        let cancellation = ProbeCancellation()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { cancellation.cancel() }
        let begun = ContinuousClock.now
        let (cancelled, end) = forward(to: again, deadline: .seconds(5), cancellation: cancellation)
        close(end)
        XCTAssertEqual(cancelled.failure, .cancelled)
        XCTAssertLessThan(ContinuousClock.now - begun, .seconds(1), "within a tenth of a second of the cancel")
        second.done.wait()
    }

    func testNoMasterListeningIsUnreachable() throws {
        let (result, ours) = forward(to: directory + "/nobody", deadline: .milliseconds(300))
        close(ours)
        guard case .unreachable? = result.failure else { return XCTFail("\(result)") }
    }

    // MARK: The fake master's side of the protocol

    private static func u32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    private static func framed(_ body: [UInt8]) -> [UInt8] { u32(UInt32(body.count)) + body }

    private static func write(_ fd: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads exactly one packet, never past its end (the descriptors follow it), as ssh does.
    private static func readPacket(_ fd: Int32) -> [UInt8]? {
        guard let header = readExactly(fd, 4) else { return nil }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        return length <= 4096 ? readExactly(fd, length) : nil
    }

    private static func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        while bytes.count < count {
            var buffer = [UInt8](repeating: 0, count: count - bytes.count)
            let got = read(fd, &buffer, buffer.count)
            guard got > 0 else { return nil }
            bytes += buffer.prefix(got)
        }
        return bytes
    }

    private static func receiveDescriptor(_ fd: Int32) -> Int32? {
        var byte: UInt8 = 0
        var control = [UInt64](repeating: 0, count: 4)
        return control.withUnsafeMutableBytes { raw -> Int32? in
            withUnsafeMutablePointer(to: &byte) { pointer in
                var part = iovec(iov_base: UnsafeMutableRawPointer(pointer), iov_len: 1)
                return withUnsafeMutablePointer(to: &part) { parts -> Int32? in
                    var message = msghdr()
                    message.msg_iov = parts
                    message.msg_iovlen = 1
                    message.msg_control = raw.baseAddress
                    message.msg_controllen = raw.count
                    guard recvmsg(fd, &message, 0) == 1, message.msg_controllen >= MemoryLayout<cmsghdr>.size + 4 else { return nil }
                    let header = raw.load(as: cmsghdr.self)
                    guard header.cmsg_level == SOL_SOCKET, header.cmsg_type == Int32(SCM_RIGHTS) else { return nil }
                    return raw.load(fromByteOffset: MemoryLayout<cmsghdr>.size, as: Int32.self)
                }
            }
        }
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
