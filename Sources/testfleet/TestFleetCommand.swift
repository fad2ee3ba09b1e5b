import ArgumentParser
import Foundation
import FleetTrustDashboard
import FleetTrustTestFleet
#if canImport(Glibc)
import Glibc
#endif

/// Starts a local fleet of real sshd processes for the demo and the benchmarks.
@main
struct TestFleetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "testfleet",
        abstract: "Run a local fleet of real OpenSSH sshd processes on 127.0.0.0/8.",
        subcommands: [Demo.self, Serve.self, Hostile.self, Silent.self, CryptoCost.self])
}

struct FleetOptions: ParsableArguments {
    @Option(help: "Number of sshd processes.")
    var hosts = 8
    @Option(help: "Loopback addresses each sshd listens on (1-16).")
    var addressesPerHost = 1
    @Flag(help: "Serve every endpoint on one port, on distinct 127.0.x.y addresses (as ssh-keyscan -p needs).")
    var samePort = false
    @Option(help: "RSA host key size.")
    var rsaBits = 3072
    @Option(help: "Directory for keys, configs, inventory and known_hosts (default: a new temporary one).")
    var directory: String?

    func makeOptions() -> TestFleet.Options {
        var options = TestFleet.Options(hosts: hosts)
        options.addressesPerHost = addressesPerHost
        options.samePort = samePort
        options.rsaBits = rsaBits
        options.directory = directory
        return options
    }
}

extension TestFleetCommand {
    struct Demo: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a fleet, open the fleettrust dashboard on it, and stop the fleet when it exits.",
            discussion: "SIGHUP and SIGTERM are passed on to the dashboard; the fleet is stopped once it has exited.")

        @OptionGroup var fleet: FleetOptions
        @Argument(help: "The fleettrust binary, then extra arguments for it.")
        var command: [String]

        func run() throws {
            guard let binary = command.first else { throw ValidationError("name the fleettrust binary") }
            ForegroundChild.forwardToChild([SIGHUP, SIGTERM])
            signal(SIGPIPE, SIG_IGN)
            print("starting \(fleet.hosts) sshd hosts on 127.0.0.1 …")
            var options = fleet.makeOptions()
            options.allowLogin = true
            let running = try TestFleet(options)
            let login = String(cString: getpwuid(geteuid()).pointee.pw_name)
            // On a failure here, the servers already started stop by PID as they are released.
            let bastion = try DemoBastion(beside: running, login: login)
            let files = DemoFiles(directory: running.directory)
            try files.inventory.write(running, bastion: bastion)
            // The demo's own history, audit log and ssh_config, so trying it leaves nothing in the user's real state.
            let arguments = ["--inventory", files.inventory.path, "--known-hosts", running.knownHostsPath,
                             "--ssh-config", bastion.sshConfigPath,
                             "--history", files.history, "--audit-log", files.auditLog, "--user", login,
                             "--connect-command", "ssh -i \(running.loginKeyFile) -o IdentitiesOnly=yes {options} -p {port} {target}"]
                + Array(command.dropFirst())
            print(files.introduction(fleet: running, bastion: bastion, binary: binary))
            let outcome = ForegroundChild.run([binary] + arguments)
            bastion.stop()
            running.stop()
            print(running.options.directory == nil ? "fleet stopped; its directory \(running.directory) was removed"
                                                   : "fleet stopped; its files are kept in \(running.directory)")
            switch outcome {
            case .exited(0): break
            case .exited(let status): throw ExitCode(status)
            case .signalled(let signal): throw ExitCode(128 + signal)
            case .couldNotStart(let why): throw ValidationError(why)
            }
        }
    }

    /// Where the demo keeps its state, and what it tells the user before the screen opens.
    struct DemoFiles {
        var directory: String
        var history: String { directory + "/history.sqlite" }
        var auditLog: String { directory + "/audit.jsonl" }
        var inventory: DemoInventory { DemoInventory(directory: directory) }

        func introduction(fleet: TestFleet, bastion: DemoBastion, binary: String) -> String {
            let roles = TestFleet.sampleRoles.prefix(fleet.hosts.count).enumerated()
                .map { "\(DemoInventory.name(of: $0.offset)) \($0.element.rawValue)" }.joined(separator: ", ")
            let files = "--inventory \(inventory.path) --known-hosts \(fleet.knownHostsPath)"
            let probing = files + " --ssh-config \(bastion.sshConfigPath)"
            return """
                The demo fleet: \(fleet.hosts.count) real sshd on 127.0.0.1, and \(DemoBastion.routedName) on \(bastion.routed.address) \
                that the inventory reaches through the bastion \(DemoBastion.bastionName) on \(bastion.bastion.address); its files are in \(directory):
                  inventory    \(inventory.path)
                  known_hosts  \(fleet.knownHostsPath)   (\(roles); \(DemoBastion.bastionName) and \(DemoBastion.routedName) trusted)
                  ssh_config   \(bastion.sshConfigPath)   (how the bastion is reached: the demo's key, user and known_hosts)
                  history      \(history)
                  audit log    \(auditLog)
                Connect (c) logs you in with the demo's own key (\(fleet.loginKeyFile)).
                While the dashboard is open, try from another terminal:
                  \(binary) scan \(probing) --history \(history)
                  \(binary) sync --check --trust-on-first-use \(probing)
                  \(binary) tidy \(files) --history \(history)
                Quitting the dashboard (q) stops the fleet.
                """
        }
    }

    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a fleet, describe it in DIRECTORY/fleet.json, and serve until SIGTERM or SIGINT.")

        @OptionGroup var fleet: FleetOptions

        func run() throws {
            let running = try TestFleet(fleet.makeOptions())
            defer { running.stop() }
            let description: [String: Any] = [
                "directory": running.directory,
                "inventory": running.inventoryPath,
                "known_hosts": running.knownHostsPath,
                "pids": running.hosts.map { Int($0.pid) },
                "endpoints": running.endpoints.map { ["address": $0.address, "port": $0.port] },
                "public_keys": running.hosts.map { $0.publicKeyFiles },
            ]
            let data = try JSONSerialization.data(withJSONObject: description, options: [.prettyPrinted, .sortedKeys])
            let path = running.directory + "/fleet.json"
            try data.write(to: URL(fileURLWithPath: path + ".tmp"))
            rename(path + ".tmp", path)
            FileHandle.standardOutput.write(Data((path + "\n").utf8))
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGTERM)
            sigaddset(&signals, SIGINT)
            pthread_sigmask(SIG_BLOCK, &signals, nil)
            var received: Int32 = 0
            sigwait(&signals, &received)
        }
    }
}

extension TestFleetCommand {
    struct Hostile: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a misbehaving SSH server on 127.0.0.1 for the hardening tests.",
            discussion: "Behaviours: \(HostileBehavior.allCases.map(\.rawValue).joined(separator: ", ")). "
                + "Prints the port it listens on, then serves until --lifetime seconds have passed.")

        @Option(help: "What the server does wrong.")
        var behavior: String
        @Option(help: "Port on 127.0.0.1 (0: any free port).")
        var port = 0
        @Option(help: "Seconds after which the server exits by itself.")
        var lifetime: Double = 120

        func run() throws {
            guard let kind = HostileBehavior(rawValue: behavior) else {
                throw ValidationError("unknown behaviour \(behavior)")
            }
            let server = try HostileServer(kind, port: port)
            FileHandle.standardOutput.write(Data("\(server.port)\n".utf8))
            server.serve(lifetime: lifetime)
        }
    }
}

extension TestFleetCommand {
    struct Silent: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Listen on many loopback addresses, one port, accepting TCP and never speaking.",
            discussion: "Addresses are 127.0.2.1, 127.0.2.2, …; prints them, one per line, then waits for --lifetime seconds.")

        @Option(help: "How many silent endpoints.")
        var count = 50
        @Option(help: "The port they all listen on.")
        var port: Int
        @Option(help: "Seconds after which the listeners exit by themselves.")
        var lifetime: Double = 600

        func run() throws {
            guard (1...250).contains(count) else { throw ValidationError("--count must be 1-250") }
            let listeners = try (1...count).map { try SilentListener(address: "127.0.2.\($0)", port: port) }
            FileHandle.standardOutput.write(Data(listeners.map { "\($0.address)\n" }.joined().utf8))
            Thread.sleep(forTimeInterval: lifetime)
            listeners.forEach { $0.close() }
        }
    }
}
