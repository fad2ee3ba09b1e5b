import Foundation

/// The history's times as people and programs read them: RFC 3339 in UTC, to the second.
public enum HistoryTime {
    /// `2026-11-23T14:24:20Z` for milliseconds since the epoch. Its 20 bytes are written in place
    /// (a report writes one or two per key it lists); a year outside 1000-9999 is spelt by
    /// interpolation, as it always was.
    public static func rfc3339(_ milliseconds: UInt64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let year = parts.tm_year + 1900, month = parts.tm_mon + 1
        guard (1000...9999).contains(year) else {
            func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
            return "\(year)-\(two(month))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
        }
        return String(unsafeUninitializedCapacity: 20) { out in
            func put(_ value: Int32, digits count: Int, at start: Int, then separator: Unicode.Scalar) {
                var value = value
                for index in (start..<start + count).reversed() {
                    out[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                out[start + count] = UInt8(ascii: separator)
            }
            put(year, digits: 4, at: 0, then: "-")
            put(month, digits: 2, at: 5, then: "-")
            put(parts.tm_mday, digits: 2, at: 8, then: "T")
            put(parts.tm_hour, digits: 2, at: 11, then: ":")
            put(parts.tm_min, digits: 2, at: 14, then: ":")
            put(parts.tm_sec, digits: 2, at: 17, then: "Z")
            return 20
        }
    }

    /// The same for a date (a scan document's `generated_at`). Made with `gmtime_r`, not a
    /// Foundation date formatter, which would page in several MB of ICU data for one line.
    public static func rfc3339(date: Date) -> String {
        rfc3339(UInt64(max(0, date.timeIntervalSince1970) * 1000))
    }

    /// The date of `2026-11-23T14:24:20Z` exactly as `rfc3339` writes it (UTC, to the second);
    /// nil for anything else. No Foundation formatter: a replay reads one per host.
    public static func date(rfc3339 text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int32(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
              let minute = number(14..<16), let second = number(17..<19), year >= 1970, (1...12).contains(month),
              (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        let seconds = timegm(&parts)
        guard seconds >= 0, rfc3339(UInt64(seconds) * 1000) == text else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Now, in milliseconds since the epoch.
    public static func nowMilliseconds() -> UInt64 {
        UInt64((Date().timeIntervalSince1970 * 1000).rounded())
    }

    /// `--since`: a duration back from `now` (`90s`, `45m`, `12h`, `30d`, `2w`), a date
    /// (`2026-11-01`, midnight UTC) or an RFC 3339 time (`2026-11-01T10:00:00Z`, an offset
    /// allowed). Nil when it is none of these.
    public static func since(_ text: String, now: UInt64) -> UInt64? {
        let units: [Character: UInt64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        if let unit = text.last.flatMap({ units[$0] }), let count = UInt64(text.dropLast()), count <= 100 * 365 * 86_400 {
            let back = count * unit * 1000
            return now > back ? now - back : 0
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = text.count == 10 ? [.withFullDate] : [.withInternetDateTime]
        if text.count == 10 { formatter.timeZone = TimeZone(identifier: "UTC") }
        guard let date = formatter.date(from: text), date.timeIntervalSince1970 >= 0 else { return nil }
        return UInt64(date.timeIntervalSince1970 * 1000)
    }
}
