import XCTest
@testable import FleetTrustCore

/// A recording answers for the hosts asked about, each with its own recorded probe, even when a
/// merged document holds one host twice (once per scanner).
final class RecordedProbesTests: XCTestCase {
    func testEachOccurrenceOfAHostGetsItsOwnRecordingInOrder() async {
        let web = InventoryHost(name: "web"), db = InventoryHost(name: "db")
        func probe(_ scanner: String) -> ProbeResult {
            var result = ProbeResult(host: "web", port: 22)
            result.scanner = CleanText(scanner)
            return result
        }
        let recorded = RecordedProbes(hosts: [web, db, web], results: [probe("a"), probe("b"), probe("c")])
        var answers: [Int: String] = [:]
        for await event in recorded.probe([web, db, web, InventoryHost(name: "unknown")]) {
            answers[event.index] = event.result.scanner?.value
        }
        XCTAssertEqual(answers, [0: "a", 1: "b", 2: "c"], "a host the recording does not hold gets no answer")
    }
}
