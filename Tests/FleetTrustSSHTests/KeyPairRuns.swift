import XCTest

/// The shape `EphemeralKeyLifetime` gives a sequence of exchanges' key pairs, from the public
/// value each exchange used, in order: runs of one key pair, the first at most `bound` long (it
/// may have begun before the test), every later one but the last exactly `bound`, at least three
/// runs, and no key pair coming back once replaced.
func assertKeyPairRuns(_ values: [[UInt8]], bound: Int, file: StaticString = #filePath, line: UInt = #line) {
    var runs: [(value: [UInt8], count: Int)] = []
    for value in values {
        if let last = runs.last, last.value == value { runs[runs.count - 1].count += 1 } else { runs.append((value, 1)) }
    }
    XCTAssertGreaterThanOrEqual(runs.count, 3, file: file, line: line)
    XCTAssertLessThanOrEqual(runs.first?.count ?? 0, bound, file: file, line: line)
    for run in runs.dropFirst().dropLast() { XCTAssertEqual(run.count, bound, file: file, line: line) }
    XCTAssertLessThanOrEqual(runs.last?.count ?? 0, bound, file: file, line: line)
    XCTAssertEqual(Set(runs.map(\.value)).count, runs.count, "a replaced key pair never comes back", file: file, line: line)
}
