import ArgumentParser

@main
struct FleetTrust: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fleettrust", abstract: "Establish and audit SSH host-key trust across a fleet.",
                                                    subcommands: [DiscoverCommand.self])
    mutating func run() async throws {}
}
