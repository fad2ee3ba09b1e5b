import Foundation
import Glibc
import FleetTrustCore

/// A host reached the way `ssh` reaches it: a channel through its bastions' control master, or
/// its ProxyCommand. Either way the probe's connection is one end of a socketpair whose other end
/// the master relays (see `ControlSocket.openForward`) or the command has as its standard input
/// and output. A hop that fails is reported (stage `proxy`) from what `ssh` or the command said.
struct RoutedTarget: Sendable {
    var host: InventoryHost
    var connections: BastionConnections

    /// `greeting` is sent before waiting for the server to speak (see `TCPConnection.awaitServer`).
    func open(deadline: ContinuousClock.Instant, cancellation: ProbeCancellation,
              greeting: [UInt8] = []) throws(ProbeFailure) -> TCPConnection {
        if let refusal = host.refusal { throw refusal.failure }
        let destination: SSHDestination
        let user: SSHUserName
        do throws(SSHNameError) {
            destination = try SSHDestination(host)
            if let given = destination.user { user = given } else { user = try SSHUserName(Self.localUser) }
        } catch {
            throw HostRefusal(reason: .unsafeName(error), source: host.source).failure
        }
        if case .command(let template)? = host.route.hops.first {
            return try openCommand(template, destination: destination, user: user, deadline: deadline, cancellation: cancellation,
                                   greeting: greeting)
        }
        let chain = connections.chain(for: host)
        let started = ContinuousClock.now
        let master = try connections.master(for: chain, cancellation: cancellation).get()
        // A master that had to log in first leaves the channel a whole timeout of its own.
        let bound = ContinuousClock.now - started > .milliseconds(50) ? max(deadline, .now + connections.timeout) : deadline
        let hop = Sanitizer.clean(chain.bastion.description, limit: 120)
        let logOffset = master.logSize
        let pair = try Self.socketPair()
        guard cancellation.register(socket: pair.ours) else {
            Glibc.close(pair.ours)
            Glibc.close(pair.theirs)
            throw ProbeFailures.cancelled
        }
        let channel: ControlSocket
        do throws(ControlSocket.Failure) {
            defer { Glibc.close(pair.theirs) }
            channel = try master.openChannel(host: destination.hostName.value, port: host.port, descriptor: pair.theirs,
                                             deadline: bound, cancellation: cancellation)
        } catch {
            cancellation.unregister(socket: pair.ours)
            Glibc.close(pair.ours)
            switch error {
            case .cancelled: throw ProbeFailures.cancelled
            case .timedOut:
                if cancellation.isCancelled { throw ProbeFailures.cancelled }
                throw ProbeFailure(stage: .connect, code: .connectTimeout,
                                   message: "bastion \(hop) did not connect to the host within the timeout")
            case .refused:
                let said = master.log(from: logOffset)
                throw RouteFailures.targetRefused(through: hop, output: said)
                    ?? RouteFailures.jump(hop, output: said, summary: RouteFiles.summary(said))
            case .unreachable(let reason):
                throw ProbeFailure(stage: .proxy, code: .hopUnreachable,
                                   message: "hop \(hop): its control master did not open a channel (\(Sanitizer.clean(reason, limit: 160)))")
            }
        }
        var connection = TCPConnection(adopting: pair.ours, child: ForwardedChannel(channel))
        do {
            try connection.awaitServer(until: bound, cancellation: cancellation, greeting: greeting)
            return connection
        } catch {
            connection.close(cancellation: cancellation)
            throw error
        }
    }

    /// The host through its ProxyCommand, run by the user's shell as `ssh` runs it.
    private func openCommand(_ template: String, destination: SSHDestination, user: SSHUserName,
                             deadline: ContinuousClock.Instant, cancellation: ProbeCancellation,
                             greeting: [UInt8]) throws(ProbeFailure) -> TCPConnection {
        let expanded: String
        do {
            expanded = try ProxyCommandTokens.expand(template, destination: destination, port: host.port, user: user)
        } catch {
            throw ProbeFailure(stage: .proxy, code: .proxyCommandFailed, message: error.description)
        }
        let shell = ProcessInfo.processInfo.environment["SHELL"].flatMap { $0.isEmpty ? nil : $0 } ?? "/bin/sh"
        guard let errors = connections.freshPath() else {
            throw ProbeFailure(stage: .proxy, code: .proxyCommandFailed,
                               message: "cannot create a private directory for the ProxyCommand's output")
        }
        let pair = try Self.socketPair()
        let child: RouteChild
        do {
            child = try RouteChild([shell, "-c", "exec \(expanded)"], stdio: pair.theirs, stderrPath: errors)
        } catch {
            Glibc.close(pair.ours)
            Glibc.close(pair.theirs)
            throw error
        }
        Glibc.close(pair.theirs)
        guard cancellation.register(socket: pair.ours) else {
            Glibc.close(pair.ours)
            child.stop()
            throw ProbeFailures.cancelled
        }
        var connection = TCPConnection(adopting: pair.ours, child: child)
        do {
            try connection.awaitServer(until: deadline, cancellation: cancellation, greeting: greeting)
            return connection
        } catch {
            let exited = Self.waitForExit(child)
            let summary = child.errorText()
            connection.close(cancellation: cancellation)
            if cancellation.isCancelled { throw ProbeFailures.cancelled }
            if let exited, exited != 0 { throw RouteFailures.command(template, status: exited, summary: summary) }
            // The command ran and ended well (or still runs): what closed is the far end, which
            // `ssh` meets as "Connection closed by UNKNOWN port 65535", a close before the
            // server's identification, not a route failure.
            guard error.stage == .banner, error.code == .connectionClosed else { throw error }
            throw RouteFailures.closedBeyondCommand(template, status: exited, summary: summary)
        }
    }

    private static func socketPair() throws(ProbeFailure) -> (ours: Int32, theirs: Int32) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw ProbeFailures.connect(errno: errno)
        }
        return (pair[0], pair[1])
    }

    /// Gives a child that closed its end a moment to exit, so its status and words are known.
    private static func waitForExit(_ child: RouteChild) -> Int32? {
        let deadline = ContinuousClock.now + .milliseconds(500)
        while ContinuousClock.now < deadline {
            if let status = child.exitStatus() { return status }
            usleep(2_000)
        }
        return nil
    }

    private static var localUser: String {
        getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "root"
    }
}
