import Foundation
import Glibc
import FleetTrustCore

/// A host reached the way `ssh` reaches it: a channel through its bastions' control masters, or
/// its ProxyCommand, whose standard input and output are one end of a socketpair; our end is the
/// probe's connection. A hop that fails is reported (stage `proxy`) from what the child said.
struct RoutedTarget: Sendable {
    var host: InventoryHost
    var connections: BastionConnections

    func open(deadline: ContinuousClock.Instant, cancellation: ProbeCancellation) throws(ProbeFailure) -> TCPConnection {
        if let refusal = host.refusal { throw refusal.failure }
        let destination: SSHDestination
        let user: SSHUserName
        do throws(SSHNameError) {
            destination = try SSHDestination(host)
            if let given = destination.user { user = given } else { user = try SSHUserName(Self.localUser) }
        } catch {
            throw HostRefusal(reason: .unsafeName(error), source: host.source).failure
        }
        let route = host.route
        let arguments: [String]
        var chain: BastionConnections.Chain?
        var command: String?
        var bound = deadline
        if case .command(let template)? = route.hops.first {
            let expanded: String
            do {
                expanded = try ProxyCommandTokens.expand(template, destination: destination, port: host.port, user: user)
            } catch {
                throw ProbeFailure(stage: .proxy, code: .proxyCommandFailed, message: error.description)
            }
            command = template
            let shell = ProcessInfo.processInfo.environment["SHELL"].flatMap { $0.isEmpty ? nil : $0 } ?? "/bin/sh"
            arguments = [shell, "-c", "exec \(expanded)"]
        } else {
            let hops = connections.chain(for: host)
            chain = hops
            let started = ContinuousClock.now
            let socket = try connections.socket(for: hops, cancellation: cancellation).get()
            if ContinuousClock.now - started > .milliseconds(50) { bound = max(deadline, .now + connections.timeout) }
            arguments = connections.channelArguments(socket: socket, chain: hops,
                                                     target: BastionConnections.forwardTarget(host: destination.hostName, port: host.port))
        }
        let masterLog = chain.flatMap { connections.masterErrorFile(for: $0) }
        let masterOffset = masterLog.map(Self.size) ?? 0
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw ProbeFailures.connect(errno: errno)
        }
        let child: RouteChild
        do {
            child = try RouteChild(arguments, stdio: pair[1], stderrPath: connections.freshPath())
        } catch {
            Glibc.close(pair[0])
            Glibc.close(pair[1])
            throw error
        }
        Glibc.close(pair[1])
        guard cancellation.register(socket: pair[0]) else {
            Glibc.close(pair[0])
            child.stop()
            throw ProbeFailures.cancelled
        }
        var connection = TCPConnection(adopting: pair[0], child: child)
        do {
            try connection.awaitServer(until: bound, cancellation: cancellation)
            return connection
        } catch {
            let exited = Self.waitForExit(child)
            let output = child.errorOutput() + (masterLog.map { Self.read($0, from: masterOffset) } ?? "")
            let summary = child.errorText()
            connection.close(cancellation: cancellation)
            if cancellation.isCancelled { throw ProbeFailures.cancelled }
            guard exited != nil || error.code != .bannerTimeout else { throw error }
            if let command { throw RouteFailures.command(command, status: exited, summary: summary) }
            let hop = Sanitizer.clean(chain?.bastion.description ?? "?", limit: 120)
            throw RouteFailures.targetRefused(through: hop, output: output)
                ?? RouteFailures.jump(hop, output: output, summary: summary.isEmpty ? Self.lastLine(output) : summary)
        }
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

    private static func size(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    private static func read(_ path: String, from offset: Int) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { return "" }
        defer { try? handle.close() }
        try? handle.seek(toOffset: UInt64(offset))
        let data = (try? handle.read(upToCount: 4096)) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    private static func lastLine(_ text: String) -> String {
        Sanitizer.clean(text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).last.map(String.init) ?? "", limit: 200)
    }
}
