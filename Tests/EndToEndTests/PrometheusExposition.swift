import Foundation

/// A strict reader of the Prometheus text exposition format as node_exporter's textfile
/// collector takes it, for tests: every line must parse, `# TYPE` comes before a family's
/// samples and at most once, a family's samples are together, no series repeats, no sample
/// carries a timestamp, and the file ends with a line feed.
struct PrometheusExposition {
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct Malformed: Error, CustomStringConvertible {
        var line: Int
        var reason: String
        var description: String { "line \(line): \(reason)" }
    }

    private(set) var samples: [Sample] = []
    private(set) var types: [String: String] = [:]
    private(set) var help: [String: String] = [:]

    init(parsing text: String) throws {
        guard text.isEmpty || text.hasSuffix("\n") else { throw Malformed(line: 0, reason: "no final line feed") }
        var finished = Set<String>()
        var current: String?
        var seen = Set<String>()
        for (index, line) in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            func fail(_ reason: String) -> Malformed { Malformed(line: number, reason: reason) }
            if line.hasPrefix("#") {
                let words = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
                guard words.count >= 3, words[1] == "HELP" || words[1] == "TYPE" else { continue }
                let name = String(words[2])
                guard Self.isMetricName(name) else { throw fail("bad metric name \(name)") }
                guard !finished.contains(name) && current != name else { throw fail("\(words[1]) for \(name) after its samples") }
                if words[1] == "TYPE" {
                    guard types[name] == nil else { throw fail("second TYPE for \(name)") }
                    guard words.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(words[3]) else {
                        throw fail("bad TYPE line")
                    }
                    types[name] = String(words[3])
                } else {
                    guard help[name] == nil else { throw fail("second HELP for \(name)") }
                    help[name] = words.count == 4 ? String(words[3]) : ""
                }
                continue
            }
            guard !line.isEmpty else { throw fail("empty line") }
            let sample = try Self.sample(line, fail: fail)
            if current != sample.name {
                if let current { finished.insert(current) }
                guard !finished.contains(sample.name) else { throw fail("samples of \(sample.name) are not together") }
                current = sample.name
            }
            let series = sample.name + sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\u{0}")
            guard seen.insert(series).inserted else { throw fail("series repeated: \(line)") }
            samples.append(sample)
        }
    }

    func samples(named name: String) -> [Sample] { samples.filter { $0.name == name } }

    private static func sample(_ line: Substring, fail: (String) -> Malformed) throws -> Sample {
        var rest = line[...]
        let name = String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" })
        guard isMetricName(name) else { throw fail("bad metric name") }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let label = String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" })
                guard let first = label.first, first.isLetter || first == "_", !label.hasPrefix("__") else { throw fail("bad label name") }
                rest = rest.dropFirst(label.count)
                guard rest.hasPrefix("=\"") else { throw fail("expected =\" after \(label)") }
                rest = rest.dropFirst(2)
                var value = ""
                while true {
                    guard let character = rest.first else { throw fail("unterminated label value") }
                    rest = rest.dropFirst()
                    if character == "\"" { break }
                    if character == "\n" { throw fail("line feed in a label value") }
                    if character == "\\" {
                        guard let escaped = rest.first else { throw fail("dangling backslash") }
                        rest = rest.dropFirst()
                        switch escaped {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: throw fail("bad escape \\\(escaped)")
                        }
                    } else {
                        value.append(character)
                    }
                }
                guard labels.updateValue(value, forKey: label) == nil else { throw fail("label \(label) twice") }
                if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" { throw fail("expected , or }") }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { throw fail("expected one space before the value") }
        let fields = rest.dropFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 1 else { throw fail("a timestamp or extra field (the textfile collector refuses timestamps)") }
        guard let value = Double(fields[0]) ?? ["+Inf": .infinity, "-Inf": -.infinity, "NaN": .nan][String(fields[0])] else {
            throw fail("bad value \(fields[0])")
        }
        return Sample(name: name, labels: labels, value: value)
    }

    private static func isMetricName(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_" || first == ":" else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }
}
