import Glibc
import FleetTrustCore

/// A TCP connection we open ourselves, so that each stage has its own deadline and error, and so
/// that another thread can interrupt it (see `ProbeCancellation`).
///
/// The socket is connected without blocking, then we wait for the server to speak first (SSH
/// servers send their identification unasked, and `ssh-keyscan` waits the same way) and peek at
/// what it said without consuming it, so that a silent port, a closed one and a non-SSH speaker
/// each get their own failure. Lines before the identification are legal (RFC 4253 4.2), so
/// "not SSH" is decided only once libssh has given up.
struct TCPConnection {
    let fd: Int32
    /// Up to `peekLimit` bytes the server sent first, still unread.
    private(set) var firstBytes: [UInt8] = []
    static let peekLimit = 256
    /// For a routed connection, what holds up the other end of `fd` (a ProxyCommand, a master's channel).
    private(set) var child: (any RouteLink)?

    /// A stream already connected (a socketpair to `child`), registered with the cancellation.
    init(adopting fd: Int32, child: any RouteLink) {
        self.fd = fd
        self.child = child
    }

    /// Connects and registers the socket with `cancellation` (which then owns the right to shut it down).
    private init(to address: SocketAddress, deadline: ContinuousClock.Instant,
         cancellation: ProbeCancellation) throws(ProbeFailure) {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ProbeFailures.connect(errno: errno) }
        guard cancellation.register(socket: fd) else {
            Glibc.close(fd)
            throw ProbeFailures.cancelled
        }
        self.fd = fd
        do {
            try connect(address, deadline: deadline, cancellation: cancellation)
        } catch {
            cancellation.unregister(socket: fd)
            Glibc.close(fd)
            throw error
        }
    }

    private func connect(_ address: SocketAddress, deadline: ContinuousClock.Instant,
                         cancellation: ProbeCancellation) throws(ProbeFailure) {
        let status = address.withSockaddr { Glibc.connect(fd, $0, $1) }
        if status != 0 {
            guard errno == EINPROGRESS else { throw ProbeFailures.connect(errno: errno) }
            guard Self.wait(fd, for: Int16(POLLOUT), until: deadline) else {
                throw cancellation.isCancelled ? ProbeFailures.cancelled : ProbeFailures.connectTimeout
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if cancellation.isCancelled { throw ProbeFailures.cancelled }
            if error != 0 { throw ProbeFailures.connect(errno: error) }
        }
        if cancellation.isCancelled { throw ProbeFailures.cancelled }
    }

    /// Connects and waits for the server to speak; on failure nothing is left open.
    static func open(to address: SocketAddress, deadline: ContinuousClock.Instant,
                     cancellation: ProbeCancellation, greeting: [UInt8] = []) throws(ProbeFailure) -> TCPConnection {
        cancellation.enter(.connect)
        var connection = try TCPConnection(to: address, deadline: deadline, cancellation: cancellation)
        cancellation.enter(.banner)
        do {
            try connection.awaitServer(until: deadline, cancellation: cancellation, greeting: greeting)
        } catch {
            connection.close(cancellation: cancellation)
            throw error
        }
        return connection
    }

    /// Connects without waiting for the server to speak (TLS: the client speaks first); the
    /// socket stays non-blocking. On failure nothing is left open.
    static func connect(to address: SocketAddress, deadline: ContinuousClock.Instant,
                        cancellation: ProbeCancellation) throws(ProbeFailure) -> TCPConnection {
        try TCPConnection(to: address, deadline: deadline, cancellation: cancellation)
    }

    /// Sends `greeting` (our identification, as `ssh` sends it at once: a server may wait to hear
    /// it before it speaks), then waits for the server's first bytes and peeks at them; hands the
    /// socket back in blocking mode. A greeting that cannot be sent shows as the end it met.
    mutating func awaitServer(until deadline: ContinuousClock.Instant, cancellation: ProbeCancellation,
                              greeting: [UInt8] = []) throws(ProbeFailure) {
        if !greeting.isEmpty {
            _ = greeting.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        }
        guard Self.wait(fd, for: Int16(POLLIN), until: deadline) else {
            throw cancellation.isCancelled ? ProbeFailures.cancelled : ProbeFailures.bannerTimeout
        }
        if cancellation.isCancelled { throw ProbeFailures.cancelled }
        var buffer = [UInt8](repeating: 0, count: Self.peekLimit)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_PEEK))
        if count < 0 { throw ProbeFailures.closedBeforeBanner(String(cString: strerror(errno))) }
        if count == 0 { throw ProbeFailures.closedBeforeBanner() }
        firstBytes = Array(buffer.prefix(count))
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
    }

    /// Stops cancellation from touching the socket, then closes our descriptor.
    func close(cancellation: ProbeCancellation) {
        cancellation.unregister(socket: fd)
        Glibc.close(fd)
        child?.disconnect()
    }

    /// Polls one descriptor; false on timeout. A `shutdown` from another thread wakes it.
    static func wait(_ fd: Int32, for events: Int16, until deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return false }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let milliseconds = Int32(min(remaining.seconds * 1000, 60_000).rounded(.up))
            let status = poll(&entry, 1, milliseconds)
            if status > 0 { return true }
            if status < 0 && errno != EINTR { return true }
        }
    }
}
