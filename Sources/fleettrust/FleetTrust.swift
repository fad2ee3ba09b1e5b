import ArgumentParser
import CBuildVersion
import FleetTrustCore
import FleetTrustDashboard
import FleetTrustSSH
import Foundation

/// The `fleettrust` command: the dashboard by default, and the scriptable tools as subcommands.
///
/// The dashboard is the default subcommand rather than the root's own `run`, so that the root
/// declares no options: swift-argument-parser lets a parent's options follow a subcommand's
/// name, and a root `--known-hosts` would take `verify --known-hosts FILE` for itself.
@main
struct FleetTrust: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleettrust",
        abstract: "Establish and audit SSH host-key trust across a fleet.",
        discussion: """
            `fleettrust --inventory FILE` opens the dashboard (the default subcommand): every host is \
            probed in the background and its keys checked against your known_hosts files. Press ? \
            inside for the keys.
            """,
        version: versionText,
        subcommands: [
            DashboardCommand.self,
            ScanCommand.self,
            MergeCommand.self,
            DiscoverCommand.self,
            SyncCommand.self,
            VerifyCommand.self,
            HistoryCommand.self,
            TidyCommand.self,
        ],
        defaultSubcommand: DashboardCommand.self)

    /// Runs the command; a usage error (an unknown option, a bad value, a missing inventory) is
    /// one line on standard error, `fleettrust: MESSAGE (see 'fleettrust COMMAND --help')`, and
    /// exit status 64, like every unreadable input, rather than argument-parser's usage block.
    static func main() async {
        if let word = CommandLine.arguments.dropFirst().first, let problem = unknownCommand(word) {
            printError(problem)
            exit(withError: ExitCode(64))
        }
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            guard code == .validationFailure, !(error is ExitCode) else { exit(withError: error) }
            if !message(for: error).hasPrefix("Unknown option"), let mistyped = MistypedOption.problem(in: Array(CommandLine.arguments.dropFirst()), helpDump: Data(_dumpHelp().utf8)) {
                printError(mistyped + UsageHint.from(fullMessage(for: error)))
                exit(withError: ExitCode(code.rawValue))
            }
            let message = message(for: error).split(whereSeparator: \.isNewline).map { $0.trimmingWhitespaceOnBothSides() }
                .joined(separator: " ")
            printError(message + UsageHint.from(fullMessage(for: error)))
            exit(withError: ExitCode(code.rawValue))
        }
    }

    /// A first word that is neither an option nor a command (`fleettrust scna`) is named as such,
    /// rather than reaching the dashboard and being told to give an inventory.
    static func unknownCommand(_ word: String) -> String? {
        let commands = configuration.subcommands.map { $0._commandName }
        guard !word.hasPrefix("-"), word != "help", !commands.contains(word) else { return nil }
        return "unknown command '\(Sanitizer.clean(word, limit: 64))' (commands: \(commands.joined(separator: ", ")); see 'fleettrust --help')"
    }

    /// `fleettrust --version`: the version this binary was built as, and the libssh and OpenSSL it
    /// runs on now, as a bug report needs them.
    static var versionText: String {
        """
        fleettrust \(String(cString: fleettrust_build_version()))
        libssh \(LinkedLibraries.libssh)
        \(LinkedLibraries.openSSL)
        """
    }
}
