import Glibc
import CLinux
import FleetTrustCore
import Synchronization

/// One connection of `ExchangeEngine`: a permit from the server's `TargetPoliteness`, a
/// non-blocking connect, our identification sent at once (as `ssh` sends its own: a server that
/// waits to hear the client before it speaks must not look unreachable to the scan when `ssh`
/// reaches it), the wait for the server to speak, then an `ExchangeSession` fed from its socket;
/// retried after a pause when load explains its failure (a refusal, or a timeout beside many
/// other connections: see `TargetPoliteness`).
///
/// Everything after `begin` runs on its loop's thread. The stages, their timeouts and their
/// failures are those of a thread-driven attempt (`TCPConnection.open`, then
/// `KeyExchangeProbe`): the connect and the server's first bytes are bounded by the connect
/// deadline, the key exchange by a full timeout from then.
final class EngineConnection: @unchecked Sendable {
    private enum Phase {
        case waitingForPermit
        case connecting
        case awaitingServer
        case exchanging
        case backingOff
        case done
    }

    let request: ExchangeRequest
    private let loop: ExchangeLoop
    private let completion: @Sendable (AttemptOutcome) -> Void
    /// The endpoint the permit is for.
    private let address: String
    /// Names the connection in its loop's epoll set and deadlines; 0 until it is watched.
    var token: UInt64 = 0
    var deadlineGeneration: UInt64 = 0

    private var phase = Phase.waitingForPermit
    private var permit: TargetPoliteness.Permit?
    private var backOff = TargetPoliteness.BackOff()
    private var fd: Int32 = -1
    private var session: ExchangeSession?
    private var unsent: [UInt8] = []
    private var exchangeStarted = ContinuousClock.now
    /// Whether the deadline of this connection, which decides, was pushed back once for load.
    private var extended = false
    private var cancelHandler: Int?
    /// Names this connection's place in its server's queue for a permit.
    private let ticket = EngineConnection.tickets.wrappingAdd(1, ordering: .relaxed).newValue
    private static let tickets = Atomic<UInt64>(0)

    init(request: ExchangeRequest, loop: ExchangeLoop, completion: @escaping @Sendable (AttemptOutcome) -> Void) {
        self.request = request
        self.loop = loop
        self.completion = completion
        self.address = TargetPoliteness.key(request.address.numeric, port: request.port)
    }

    /// Asks for a permit (on the caller's thread); the rest happens on the loop's thread.
    func begin() {
        guard let handler = request.cancellation.onCancel({ [self] in loop.post(.cancel(self)) }) else {
            completion(AttemptOutcome(failure: ProbeFailures.cancelled))
            return
        }
        cancelHandler = handler
        askForPermit()
    }

    /// Runs on the caller's thread when the attempt begins, so it leaves `phase` (the loop's) alone.
    private func askForPermit() {
        if let permit = request.politeness.acquire(address, ticket: ticket, orWhenFree: { [self] in
            loop.post(.start(self, $0, waited: true))
        }) {
            loop.post(.start(self, permit, waited: false))
        }
    }

    // MARK: On the loop's thread

    func connect(_ permit: TargetPoliteness.Permit, waited: Bool) {
        guard phase == .waitingForPermit else {
            // Cancelled while it waited: the permit goes straight back.
            request.politeness.release(permit)
            return
        }
        self.permit = permit
        let cancellation = request.cancellation
        cancellation.enter(.connect)
        let deadline = waited || backOff.retried ? .now + request.timeout : request.connectDeadline
        fd = socket(request.address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return finish(.failure(ProbeFailures.connect(errno: errno))) }
        guard cancellation.register(socket: fd) else {
            Glibc.close(fd)
            fd = -1
            return finish(.failure(ProbeFailures.cancelled))
        }
        if request.decides { Self.markLikeSSH(fd, family: request.address.family) }
        let status = request.address.withSockaddr { Glibc.connect(fd, $0, $1) }
        if status != 0 && errno != EINPROGRESS { return finish(.failure(ProbeFailures.connect(errno: errno))) }
        phase = .connecting
        // Edge-triggered: one event when connected, then one each time bytes arrive or the send
        // buffer frees, so the set never needs changing.
        guard loop.watch(self, fd: fd, events: Self.events) else {
            return finish(.failure(ProbeFailures.connect(errno: errno)))
        }
        loop.arm(self, at: deadline)
        if status == 0 { connected() }
    }

    /// The type of service `ssh` (Debian's default `IPQoS lowdelay throughput`) sets on its socket
    /// before it connects, so its very SYN carries it: a router that tells clients apart by it
    /// must see the connection that decides as it sees `ssh`'s. A host's own `IPQoS` is not
    /// mirrored.
    static let interactiveTypeOfService: Int32 = 0x10

    private static func markLikeSSH(_ fd: Int32, family: Int32) {
        var value = interactiveTypeOfService
        let size = socklen_t(MemoryLayout<Int32>.size)
        if family == AF_INET6 {
            _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_TCLASS, &value, size)
        } else {
            _ = setsockopt(fd, Int32(IPPROTO_IP), IP_TOS, &value, size)
        }
    }

    private static let events = EPOLLOUT.rawValue | EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
    /// What one socket may have read per turn of its loop: more than a real server's whole
    /// exchange (a packet is at most 256 KiB), so a peer streaming without end (IGNORE messages
    /// at loopback speed) neither holds the loop from its other connections and deadlines nor
    /// grows the buffer before it is parsed.
    private static let bytesPerTurn = BinaryPacket.maximumLength

    func handle(events: UInt32) {
        switch phase {
        case .connecting:
            if request.cancellation.isCancelled { return finish(.failure(ProbeFailures.cancelled)) }
            if events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                if error != 0 { return finish(.failure(ProbeFailures.connect(errno: error))) }
            } else if events & EPOLLOUT.rawValue == 0 {
                return
            }
            connected()
            if phase == .awaitingServer, events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0 { receive(events: events) }
        case .awaitingServer, .exchanging:
            if events & EPOLLOUT.rawValue != 0 && !unsent.isEmpty { flush() }
            if phase != .done && events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLRDHUP.rawValue | EPOLLERR.rawValue) != 0 {
                receive(events: events)
            }
        case .waitingForPermit, .backingOff, .done:
            break
        }
    }

    private func connected() {
        phase = .awaitingServer
        request.cancellation.enter(.banner)
        do {
            let session = try ExchangeSession(offer: request.offer, keyExchange: request.keyExchange)
            self.session = session
            send(session.opening, stage: .banner)
        } catch {
            finish(.failure(error))
        }
    }

    /// Reads what the socket holds and takes the exchange as far as each read allows. A read
    /// shorter than the buffer emptied the socket, unless the peer also closed: then the next
    /// read sees the end, which no later edge would report. Past `bytesPerTurn` the socket waits
    /// for the loop's next turn.
    private func receive(events: UInt32) {
        let peerClosed = events & (EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
        var ended: TransportSocket.Failure?
        var budget = Self.bytesPerTurn
        while true {
            let count = recv(fd, loop.scratch.baseAddress, loop.scratch.count, Int32(MSG_DONTWAIT))
            if count > 0 {
                if phase == .awaitingServer { startExchange() }
                session?.buffer.append(UnsafeBufferPointer(rebasing: loop.scratch[..<count]))
                advance()
                guard phase == .exchanging else { return }
                budget -= count
                if count < loop.scratch.count && !peerClosed { return }
                if budget <= 0 { return loop.watchAgain(self, fd: fd, events: Self.events) }
                continue
            }
            if count == 0 {
                ended = .closed
            } else if errno == EINTR {
                continue
            } else if errno != EAGAIN && errno != EWOULDBLOCK {
                ended = .system(errno)
            }
            break
        }
        if phase == .awaitingServer {
            // Nothing at all came before the end: the banner stage's failure.
            if let ended {
                let detail: String? = if case .system(let code) = ended { String(cString: strerror(code)) } else { nil }
                finish(.failure(ProbeFailures.closedBeforeBanner(detail)))
            }
            return
        }
        if phase == .exchanging, let ended, let session { finish(.failure(session.failure(ended))) }
    }

    /// The server spoke: the key exchange starts, with a full timeout of its own.
    private func startExchange() {
        request.cancellation.enter(.keyExchange)
        phase = .exchanging
        exchangeStarted = .now
        loop.arm(self, at: exchangeStarted + request.timeout)
    }

    private func advance() {
        guard let session else { return }
        while phase == .exchanging {
            do {
                switch try session.advance() {
                case .needMore:
                    return
                case .send(let bytes):
                    send(bytes, stage: .keyExchange)
                case .proved(var key):
                    sendGoodbye()
                    key.handshakeMilliseconds = (ContinuousClock.now - exchangeStarted).milliseconds
                    finish(.success(key))
                }
            } catch {
                if error == KeyExchangeFailures.notNeeded { sendGoodbye() }
                finish(.failure(error))
            }
        }
    }

    /// SSH_MSG_DISCONNECT, right before `finish` closes the socket: held back (`MSG_MORE`) so
    /// that the close's FIN leaves in the same segment, one loopback segment fewer for both
    /// kernels per connection; closing sends what is held.
    private func sendGoodbye() {
        send(BinaryPacket.goodbye, stage: .keyExchange, required: false, more: true)
    }

    /// Sends what the socket takes now and keeps the rest for when it is writable.
    private func send(_ bytes: [UInt8], stage: ProbeStage, required: Bool = true, more: Bool = false) {
        guard unsent.isEmpty else {
            unsent += bytes
            return
        }
        let flags = Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT) | (more ? Int32(MSG_MORE) : 0)
        let sent = bytes.withUnsafeBytes { raw in Glibc.send(fd, raw.baseAddress, raw.count, flags) }
        if sent == bytes.count || !required { return }
        if sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            return finish(.failure(KeyExchangeFailures.transport(.system(errno), stage: stage)))
        }
        unsent = Array(bytes[max(0, sent)...])
    }

    private func flush() {
        let sent = unsent.withUnsafeBytes { raw in
            Glibc.send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        }
        if sent < 0 {
            if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                finish(.failure(KeyExchangeFailures.transport(.system(errno), stage: .keyExchange)))
            }
            return
        }
        unsent.removeFirst(sent)
    }

    func deadlinePassed() {
        // The loop may have come to this deadline late, busy with other connections' exchanges
        // (a post-quantum key generation costs milliseconds) while the server's bytes already
        // waited in the socket: what arrived before the loop looked is taken first, and only a
        // socket with nothing new times out.
        if isOpen, let pending = pendingEvents() {
            let generation = deadlineGeneration
            handle(events: pending)
            if phase == .done || deadlineGeneration != generation { return }
        }
        if request.decides, !extended, isOpen, let permit, request.politeness.runsBesideMany(permit) {
            // The connection that decides is not replaced after a timeout the scan's load may
            // explain, as another would be (a relay could send the new one elsewhere): it waits
            // one timeout more, as long as the retry would have taken.
            extended = true
            return loop.arm(self, at: .now + request.timeout)
        }
        switch phase {
        case .connecting: finish(.failure(ProbeFailures.connectTimeout))
        case .awaitingServer: finish(.failure(ProbeFailures.bannerTimeout))
        case .exchanging: finish(.failure(session?.failure(.timeout) ?? ProbeFailures.bannerTimeout))
        case .backingOff:
            phase = .waitingForPermit
            askForPermit()
        case .waitingForPermit, .done: break
        }
    }

    /// Whether the connection has a socket a deadline waits on (connecting, or talking to the server).
    private var isOpen: Bool { phase == .connecting || phase == .awaitingServer || phase == .exchanging }

    /// What the socket has ready now (as epoll would report it), nil when nothing.
    private func pendingEvents() -> UInt32? {
        guard fd >= 0 else { return nil }
        // poll(2) and epoll(7) share the bit values of these conditions; POLLRDHUP is
        // EPOLLRDHUP (Glibc leaves POLLRDHUP to _GNU_SOURCE).
        let readHangUp = Int32(EPOLLRDHUP.rawValue)
        var entry = pollfd(fd: fd, events: Int16(Int32(POLLIN) | Int32(POLLOUT) | readHangUp), revents: 0)
        guard poll(&entry, 1, 0) == 1 else { return nil }
        let ready = Int32(entry.revents)
        var events: UInt32 = 0
        if ready & Int32(POLLIN) != 0 { events |= EPOLLIN.rawValue }
        if ready & Int32(POLLOUT) != 0 { events |= EPOLLOUT.rawValue }
        if ready & readHangUp != 0 { events |= EPOLLRDHUP.rawValue }
        if ready & Int32(POLLHUP) != 0 { events |= EPOLLHUP.rawValue }
        if ready & Int32(POLLERR) != 0 { events |= EPOLLERR.rawValue }
        // Only writable, in a phase past the connect: nothing came that the deadline waited for.
        if phase != .connecting && events & ~EPOLLOUT.rawValue == 0 { return nil }
        return events == 0 ? nil : events
    }

    func cancelled() {
        switch phase {
        case .done: break
        case .waitingForPermit, .backingOff:
            // A grant already on its way finds the attempt done and returns the permit.
            if phase == .waitingForPermit { _ = request.politeness.withdraw(address, ticket: ticket) }
            loop.forget(self)
            end(AttemptOutcome(failure: ProbeFailures.cancelled))
        case .connecting, .awaitingServer, .exchanging:
            finish(.failure(ProbeFailures.cancelled))
        }
    }

    /// Ends this try: closes the socket, returns the permit, and either retries after a pause
    /// (load explains the failure) or reports the outcome.
    private func finish(_ result: Result<DiscoveredKey, ProbeFailure>) {
        let cancellation = request.cancellation
        if fd >= 0 {
            cancellation.unregister(socket: fd)
            Glibc.close(fd)
            fd = -1
        }
        loop.forget(self)
        let outcome = AttemptOutcome(session?.report ?? KeyExchangeReport(outcome: result), result, cancellation: cancellation)
        session = nil
        unsent = []
        let pause = permit.flatMap { request.politeness.release($0, after: outcome.load(decides: request.decides), backOff: &backOff) }
        permit = nil
        if !cancellation.isCancelled, let pause {
            phase = .backingOff
            cancellation.enterBackOff()
            loop.keep(self)
            loop.arm(self, at: .now + pause)
            return
        }
        end(outcome)
    }

    /// Reports the outcome, once.
    private func end(_ outcome: AttemptOutcome) {
        phase = .done
        if let cancelHandler { request.cancellation.forgetHandler(cancelHandler) }
        cancelHandler = nil
        completion(outcome)
    }
}
