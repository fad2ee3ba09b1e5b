import Glibc
import FleetTrustCore

/// The key-exchange client's TCP stream for a thread that blocks on it, in which every wait
/// ends at one deadline.
///
/// A server may stall at any byte, so each read and write polls until the deadline of the whole
/// exchange. A descriptor handed in by the caller (who may shut it down from another thread to
/// cancel) stays the caller's to close; one this type connected itself is closed when it goes away.
struct TransportSocket: ~Copyable {
    enum Failure: Error {
        case timeout
        case closed
        case system(Int32)
        case lineTooLong
    }

    let fd: Int32
    let deadline: ContinuousClock.Instant
    private let ownsDescriptor: Bool

    init(adopting fd: Int32, deadline: ContinuousClock.Instant) {
        self.fd = fd
        self.deadline = deadline
        self.ownsDescriptor = false
    }

    private init(owning fd: Int32, deadline: ContinuousClock.Instant) {
        self.fd = fd
        self.deadline = deadline
        self.ownsDescriptor = true
    }

    deinit {
        if ownsDescriptor { close(fd) }
    }

    /// Resolves `host` and connects to the first address that answers before the deadline.
    static func connect(host: String, port: Int, deadline: ContinuousClock.Instant) throws(ProbeFailure) -> TransportSocket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, list != nil else {
            throw ProbeFailure(stage: .resolve, code: .resolveFailed,
                               message: "cannot resolve the name: \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastFailure = ProbeFailure(stage: .connect, code: .hostUnreachable, message: "the name has no usable address")
        var entry = list
        while let current = entry, let address = current.pointee.ai_addr {
            entry = current.pointee.ai_next
            let fd = socket(current.pointee.ai_family, current.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            let connection = TransportSocket(owning: fd, deadline: deadline)
            if Glibc.connect(fd, address, current.pointee.ai_addrlen) == 0 { return connection }
            guard errno == EINPROGRESS else {
                lastFailure = connectFailure(errno)
                continue
            }
            do {
                try connection.wait(for: Int16(POLLOUT))
            } catch {
                throw ProbeFailure(stage: .connect, code: .connectTimeout, message: "no TCP connection within the timeout")
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error == 0 { return connection }
            lastFailure = connectFailure(error)
        }
        throw lastFailure
    }

    private static func connectFailure(_ code: Int32) -> ProbeFailure {
        let why = String(cString: strerror(code))
        if code == ECONNREFUSED { return ProbeFailure(stage: .connect, code: .connectionRefused, message: "connection refused") }
        return ProbeFailure(stage: .connect, code: .hostUnreachable, message: "cannot connect: \(why)")
    }

    /// The numeric address of the peer, when the socket is connected.
    var peerAddress: String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let found = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                getpeername(fd, address, &length) == 0
                    && getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0
            }
        }
        return found ? String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
    }

    func write(_ bytes: [UInt8]) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if result > 0 {
                sent += result
            } else if result < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                try wait(for: Int16(POLLOUT))
            } else {
                throw result == 0 ? .closed : .system(errno)
            }
        }
    }

    /// Waits for the server's next bytes and appends them to `buffer`.
    func fill(into buffer: inout ReceiveBuffer) throws(Failure) {
        while true {
            try wait(for: Int16(POLLIN))
            let count = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16 * 1024) { chunk in
                let count = recv(fd, chunk.baseAddress, chunk.count, Int32(MSG_DONTWAIT))
                if count > 0 { buffer.append(UnsafeBufferPointer(rebasing: chunk[..<count])) }
                return count
            }
            if count > 0 { return }
            if count == 0 { throw .closed }
            if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { throw .system(errno) }
        }
    }

    private func wait(for events: Int16) throws(Failure) {
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw .timeout }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var request = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&request, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw .system(errno) }
        }
    }
}
