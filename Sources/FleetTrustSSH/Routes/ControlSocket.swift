import Glibc

/// One connection to an `ssh` control master's socket, speaking the master's multiplexing
/// protocol (OpenSSH's PROTOCOL.mux, version 4) ourselves.
///
/// It is how a probe gets a channel through a bastion without starting a process: the
/// `MUX_C_NEW_STDIO_FWD` request, followed by one end of a socketpair passed twice (as standard
/// input and output, `SCM_RIGHTS`), asks the master to open a `direct-tcpip` channel to the host
/// and relay it to that descriptor, exactly as `ssh -S socket -W host:port` asks on our behalf.
/// The master answers once the bastion has confirmed or refused the channel. The channel lives as
/// long as this connection: the master ends it when the connection closes.
///
/// The same protocol keeps the master for the whole session (`ControlMaster`): an idle connection
/// counts as a client, so a master started with `ControlPersist` stays while we hold one and ends
/// by itself a few seconds after it closes, which the kernel does however fleettrust ends.
///
/// Everything the master sends is bounded (`packetLimit`) and parsed, never trusted for a length.
/// One thread uses a connection at a time (a probe's, or its `ControlMaster`'s under its lock).
final class ControlSocket: @unchecked Sendable {
    enum Failure: Error, Equatable {
        /// The master is gone, never answered, or spoke something other than the protocol.
        case unreachable(String)
        /// The master answered the request with a refusal (its reason, as it said it).
        case refused(String)
        case timedOut
        case cancelled
    }

    private enum Message: UInt32 {
        case hello = 0x0000_0001
        case aliveCheck = 0x1000_0004
        case terminate = 0x1000_0005
        case newStdioForward = 0x1000_0008
        case ok = 0x8000_0001
        case permissionDenied = 0x8000_0002
        case failure = 0x8000_0003
        case alive = 0x8000_0005
        case sessionOpened = 0x8000_0006
    }

    static let version: UInt32 = 4
    /// The master's replies are a few dozen bytes; anything past this is not a master.
    static let packetLimit = 16 * 1024

    let fd: Int32
    private var received: [UInt8] = []
    private var nextRequest: UInt32 = 1
    private var greeted = false

    /// Connects to the master listening at `path`. A master whose backlog is full (busy accepting
    /// others; `ChannelAdmission` keeps our own connections below it) is tried again, less and
    /// less often, until `deadline`: a Unix socket's `connect` cannot be waited on.
    init(path: String, deadline: ContinuousClock.Instant) throws(Failure) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw .unreachable("the control socket path is too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .unreachable(String(cString: strerror(errno))) }
        var pause: useconds_t = 1_000
        while true {
            let status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if status == 0 { return }
            let error = errno
            guard error == EAGAIN || error == EINTR, ContinuousClock.now < deadline else {
                Glibc.close(fd)
                throw .unreachable("control socket: \(String(cString: strerror(error)))")
            }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    deinit { Glibc.close(fd) }

    /// Whether the master has closed this connection (it never writes to an idle one unasked,
    /// so anything readable means it is ending or gone); never blocks.
    var isClosedByMaster: Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) != 0
    }

    /// Exchanges greetings and asks for the master's PID (`MUX_C_ALIVE_CHECK`).
    func aliveCheck(deadline: ContinuousClock.Instant) throws(Failure) -> pid_t {
        let request = takeRequestNumber()
        try send(greeting() + Self.packet(.aliveCheck, request), deadline: deadline)
        try awaitGreeting(deadline: deadline, cancellation: nil)
        var reply = try receive(deadline: deadline, cancellation: nil)
        guard try reply.message() == .alive, try reply.u32() == request, let pid = pid_t(exactly: try reply.u32()), pid > 1 else {
            throw .unreachable("the control master did not report its PID")
        }
        return pid
    }

    /// Asks the master to end now (`MUX_C_TERMINATE`), without waiting for it.
    func requestTermination() {
        let request = takeRequestNumber()
        try? send((greeted ? [] : greeting()) + Self.packet(.terminate, request), deadline: .now + .milliseconds(200))
        greeted = true
    }

    /// Waits for the master to close this connection, which it does as it exits; false at `deadline`.
    @discardableResult
    func awaitClose(deadline: ContinuousClock.Instant) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count == 0 || count < 0 && errno != EAGAIN && errno != EINTR { return true }
            if count > 0 { continue }
            let left = deadline - .now
            guard left > .zero else { return false }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, Int32(min(left.seconds * 1000, 1000).rounded(.up)))
        }
    }

    /// Asks for a channel to `host`:`port` relayed to `descriptor` (`MUX_C_NEW_STDIO_FWD`); returns
    /// once the bastion opened it. `accepted` runs as soon as the master has greeted this
    /// connection (it greets as it accepts), before the bastion has answered. A cancelled probe
    /// stops the wait within a tenth of a second.
    func openForward(host: String, port: Int, descriptor: Int32, deadline: ContinuousClock.Instant,
                     cancellation: ProbeCancellation, accepted: () -> Void = {}) throws(Failure) {
        guard let port = UInt32(exactly: port) else { throw .refused("bad port") }
        let request = takeRequestNumber()
        var body = Self.u32(Message.newStdioForward.rawValue) + Self.u32(request)
        body += Self.string([]) + Self.string(Array(host.utf8)) + Self.u32(port)
        try send(greeting() + Self.framed(body), deadline: deadline)
        // The master reads standard input's descriptor, then standard output's: the same end twice.
        try sendDescriptor(descriptor, deadline: deadline)
        try sendDescriptor(descriptor, deadline: deadline)
        try awaitGreeting(deadline: deadline, cancellation: cancellation)
        accepted()
        var reply = try receive(deadline: deadline, cancellation: cancellation)
        let message = try reply.message()
        guard try reply.u32() == request else { throw .unreachable("the control master answered another request") }
        switch message {
        case .sessionOpened: return
        case .failure, .permissionDenied: throw .refused(String(decoding: try reply.string(), as: UTF8.self))
        default: throw .unreachable("unexpected answer from the control master")
        }
    }

    private func takeRequestNumber() -> UInt32 {
        defer { nextRequest &+= 1 }
        return nextRequest
    }

    private func greeting() -> [UInt8] {
        Self.framed(Self.u32(Message.hello.rawValue) + Self.u32(Self.version))
    }

    private func awaitGreeting(deadline: ContinuousClock.Instant, cancellation: ProbeCancellation?) throws(Failure) {
        greeted = true
        var hello = try receive(deadline: deadline, cancellation: cancellation)
        guard try hello.message() == .hello, try hello.u32() == Self.version else {
            throw .unreachable("the control master speaks another multiplexing version")
        }
    }

    // MARK: Framing

    private static func u32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    private static func string(_ bytes: [UInt8]) -> [UInt8] { u32(UInt32(bytes.count)) + bytes }

    private static func framed(_ body: [UInt8]) -> [UInt8] { string(body) }

    private static func packet(_ message: Message, _ request: UInt32) -> [UInt8] {
        framed(u32(message.rawValue) + u32(request))
    }

    /// One received packet's body, read field by field; a field past its end is a protocol error.
    private struct Reader {
        var bytes: ArraySlice<UInt8>

        mutating func u32() throws(Failure) -> UInt32 {
            guard bytes.count >= 4 else { throw .unreachable("a short answer from the control master") }
            defer { bytes = bytes.dropFirst(4) }
            return bytes.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func message() throws(Failure) -> Message? { Message(rawValue: try u32()) }

        mutating func string() throws(Failure) -> [UInt8] {
            let count = Int(try u32())
            guard count <= bytes.count else { throw .unreachable("a short answer from the control master") }
            defer { bytes = bytes.dropFirst(count) }
            return Array(bytes.prefix(count))
        }
    }

    // MARK: Input and output

    private func send(_ bytes: [UInt8], deadline: ContinuousClock.Instant) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count > 0 {
                sent += count
            } else if count < 0 && (errno == EAGAIN || errno == EINTR) {
                try wait(for: Int16(POLLOUT), deadline: deadline, cancellation: nil)
            } else {
                throw .unreachable("control socket: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Passes `descriptor` to the master: one byte carrying it as `SCM_RIGHTS`, as ssh's own client does.
    private func sendDescriptor(_ descriptor: Int32, deadline: ContinuousClock.Instant) throws(Failure) {
        let header = MemoryLayout<cmsghdr>.size
        let space = header + (MemoryLayout<Int32>.size + 7) / 8 * 8
        var control = [UInt64](repeating: 0, count: space / 8)
        var byte: UInt8 = 0
        while true {
            let count = control.withUnsafeMutableBytes { raw -> Int in
                let entry = raw.baseAddress!.assumingMemoryBound(to: cmsghdr.self)
                entry.pointee.cmsg_len = header + MemoryLayout<Int32>.size
                entry.pointee.cmsg_level = SOL_SOCKET
                entry.pointee.cmsg_type = Int32(SCM_RIGHTS)
                raw.storeBytes(of: descriptor, toByteOffset: header, as: Int32.self)
                return withUnsafeMutablePointer(to: &byte) { pointer in
                    var part = iovec(iov_base: UnsafeMutableRawPointer(pointer), iov_len: 1)
                    return withUnsafeMutablePointer(to: &part) { parts in
                        var message = msghdr()
                        message.msg_iov = parts
                        message.msg_iovlen = 1
                        message.msg_control = raw.baseAddress
                        message.msg_controllen = space
                        return sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
                    }
                }
            }
            if count == 1 { return }
            guard count < 0, errno == EAGAIN || errno == EINTR else {
                throw .unreachable("control socket: cannot pass the channel: \(String(cString: strerror(errno)))")
            }
            try wait(for: Int16(POLLOUT), deadline: deadline, cancellation: nil)
        }
    }

    /// The body of the next packet from the master.
    private func receive(deadline: ContinuousClock.Instant, cancellation: ProbeCancellation?) throws(Failure) -> Reader {
        while true {
            if received.count >= 4 {
                let length = received.prefix(4).reduce(0) { $0 << 8 | Int($1) }
                guard length <= Self.packetLimit else { throw .unreachable("an oversized answer from the control master") }
                if received.count >= 4 + length {
                    defer { received.removeFirst(4 + length) }
                    return Reader(bytes: received[4 ..< 4 + length])
                }
            }
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = read(fd, &buffer, buffer.count)
            if count > 0 {
                received += buffer.prefix(count)
            } else if count == 0 {
                throw .unreachable("the control master closed the connection")
            } else if errno == EAGAIN || errno == EINTR {
                try wait(for: Int16(POLLIN), deadline: deadline, cancellation: cancellation)
            } else {
                throw .unreachable("control socket: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Waits for `events` on the socket until `deadline`, at most a tenth of a second at a time
    /// so that a cancelled probe stops waiting.
    private func wait(for events: Int16, deadline: ContinuousClock.Instant, cancellation: ProbeCancellation?) throws(Failure) {
        if cancellation?.isCancelled == true { throw .cancelled }
        let left = deadline - .now
        guard left > .zero else { throw .timedOut }
        var entry = pollfd(fd: fd, events: events, revents: 0)
        _ = poll(&entry, 1, Int32(min(left.seconds * 1000, 100).rounded(.up)))
    }
}
