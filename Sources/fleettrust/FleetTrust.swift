import ArgumentParser

@main
struct FleetTrust: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fleettrust", abstract: "Establish and audit SSH host-key trust across a fleet.",
                                                    subcommands: [ScanCommand.self, DiscoverCommand.self, VerifyCommand.self])
    mutating func run() async throws {}
}
