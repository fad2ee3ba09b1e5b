import FleetTrustCore

/// Everything that can happen to the dashboard, as a value for `DashboardUpdate.update`.
public enum DashboardMessage: Equatable, Sendable {
    case key(Key)
    /// A mouse click on a terminal row (0-based).
    case click(row: Int)
    case resize(TerminalSize)
    /// Probe results (or re-assessments after a write), batched per UI tick.
    case hostsUpdated([HostUpdate])
    /// A write the dashboard asked for has finished (or failed); `message` is one sentence.
    case writeFinished(succeeded: Bool, message: String)
    /// The connect command has exited and the terminal is ours again.
    case connectFinished(message: String)
    /// The history could not record a probe (one sentence naming the file).
    case historyFailed(message: String)
    /// The probe pool's hosts in flight and waiting changed (nil: no probe is running).
    case probeLoad(ProbeLoad?)
}

public struct TerminalSize: Equatable, Sendable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// A new judgement for the host at `index`: of a probe that just finished (`probed`), or of
/// its latest probe judged again (after a write, or when another host turned out to share a key).
public struct HostUpdate: Equatable, Sendable {
    public var index: Int
    public var judged: JudgedHost
    /// Whether this ends a probe of the host (the discovery progress counts it).
    public var probed: Bool

    public init(index: Int, judged: JudgedHost, probed: Bool) {
        self.index = index
        self.judged = judged
        self.probed = probed
    }
}

/// A key press, decoded from curses into what the dashboard cares about.
public enum Key: Hashable, Sendable {
    case character(Character)
    case up, down, left, right, pageUp, pageDown, home, end
    case enter, escape, backspace, tab
    /// Ctrl-U: readline's `unix-line-discard`, the whole line typed so far.
    case clearLine
}
