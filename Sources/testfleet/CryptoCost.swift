import ArgumentParser
import FleetTrustSSH

extension TestFleetCommand {
    /// The client's sntrup761 cost in this build, for the CPU benchmark's "of which sntrup761" row.
    struct CryptoCost: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "crypto-cost",
            abstract: "Print this build's thread CPU per sntrup761 key pair (in a batch) and per decapsulation, and how many exchanges a key pair serves.",
            discussion: "Best of --rounds rounds of --operations each; one line per figure, in microseconds.")

        @Option(help: "Rounds; the best is printed.")
        var rounds = 3
        @Option(help: "Key pairs and decapsulations per round.")
        var operations = 200

        func run() throws {
            guard rounds > 0, operations > 0 else { throw ValidationError("rounds and operations must be positive") }
            let figures = Sntrup761ClientCost.measure(rounds: rounds, operations: operations)
            print("sntrup761-keypair-us \(Double(figures.keyPairNanoseconds) / 1000)")
            print("sntrup761-decapsulation-us \(Double(figures.decapsulationNanoseconds) / 1000)")
            print("sntrup761-exchanges-per-key-pair \(Sntrup761ClientCost.exchangesPerKeyPair)")
        }
    }
}
