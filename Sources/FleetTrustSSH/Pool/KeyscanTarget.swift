import Foundation
import FleetTrustCore

/// One target as `ssh-keyscan` takes it, on its command line or one per line of a `-f` file:
/// `ADDRLIST [NAMELIST]`. The addresses (comma-separated) are tried in order until one can be
/// connected to; the keys are printed under the names (comma-separated), or under the
/// addresses when no names are given. Each element may carry its port (`host:port`,
/// `[host]:port`); names without one take the port of the address that answered.
public struct KeyscanTarget: Sendable {
    /// Tried in order: the next one only when the one before could not be resolved or connected to.
    public var addresses: [ProbeTarget]
    /// The names the keys are printed under; a nil port is the port of the address that answered.
    public var names: [(host: String, port: Int?)]
    /// `file:line` of the line it was read from (`-f`); empty for a command-line target.
    public var place: String = ""

    /// The known_hosts lookup strings (`host`, or `[host]:port`) for keys fetched from `address`.
    public func lookupNames(answeredBy address: ProbeTarget) -> [String] {
        names.map { LookupName(host: $0.host, port: $0.port ?? address.port).hostString }
    }

    public struct SyntaxError: Error, CustomStringConvertible {
        /// `file:line: ` for a line of a file; empty for a command-line target.
        public var place: String
        public var reason: String
        public var description: String { place + reason }
    }

    /// Parses one target; nil for a blank line or a comment. As in `ssh-keyscan`, `#` starts a
    /// comment anywhere on a line.
    public static func parse(_ line: Substring, defaultPort: Int, place: String = "") throws(SyntaxError) -> KeyscanTarget? {
        let text = line.prefix { $0 != "#" }
        let words = text.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" })
        guard let first = words.first else { return nil }
        func fail(_ reason: String) -> SyntaxError { SyntaxError(place: place, reason: reason) }
        func targets(_ list: Substring, port: Int) throws(SyntaxError) -> [ProbeTarget] {
            var parsed: [ProbeTarget] = []
            for element in list.split(separator: ",", omittingEmptySubsequences: false) {
                let element = element.trimmingCharacters(in: .whitespaces)
                if element.isEmpty { throw fail("empty name in \"\(Sanitizer.clean(String(list), limit: 80))\"") }
                if element.contains("/") {
                    throw fail("\"\(Sanitizer.clean(element, limit: 80))\": address ranges (CIDR) are not supported; list the addresses")
                }
                do { parsed.append(try ProbeTarget(parsing: element, defaultPort: port)) } catch { throw fail(error.description) }
            }
            return parsed
        }
        let addresses = try targets(first, port: defaultPort)
        // Port 0 stands for "none given": such a name takes the port of the address that answers.
        let names = words.count > 1 ? try targets(words[1], port: 0).map { ($0.host, $0.port == 0 ? nil : Optional($0.port)) }
            : addresses.map { ($0.host, Optional($0.port)) }
        var target = KeyscanTarget(addresses: addresses, names: names)
        target.place = place.hasSuffix(": ") ? String(place.dropLast(2)) : place
        return target
    }

    /// Every target in a file's text; a bad line is reported (`file:line: reason`) and left out.
    public static func read(_ text: String, file: String, defaultPort: Int) -> (targets: [KeyscanTarget], errors: [SyntaxError]) {
        var targets: [KeyscanTarget] = []
        var errors: [SyntaxError] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            do {
                if let target = try parse(line, defaultPort: defaultPort, place: "\(Sanitizer.clean(file)):\(index + 1): ") {
                    targets.append(target)
                }
            } catch {
                errors.append(error)
            }
        }
        return (targets, errors)
    }

    /// Every target of `files` (`-` is `input`, named `<stdin>`), a bad line reported and left out;
    /// a file that cannot be read is refused with its reason.
    public static func read(files: [String], input: () -> [UInt8], defaultPort: Int) throws(InputFile.Failure)
        -> (targets: [KeyscanTarget], errors: [SyntaxError]) {
        var all: (targets: [KeyscanTarget], errors: [SyntaxError]) = ([], [])
        for file in files {
            let bytes = file == "-" ? input() : try InputFile.read(file, role: "targets file")
            let read = read(String(decoding: bytes, as: UTF8.self), file: file == "-" ? "<stdin>" : file, defaultPort: defaultPort)
            all.targets += read.targets
            all.errors += read.errors
        }
        return all
    }
}
