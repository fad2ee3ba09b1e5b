/// How many connections a whole scan keeps in flight at once: additive increase, multiplicative
/// decrease, driven by timeouts.
///
/// On loopback, or against a fleet behind one busy link, a scan can open connections faster than
/// the machine (or the servers) can answer them: with both cores busy, a server's identification
/// or its key-exchange reply may come after the timeout although the server is up. Such a
/// timeout is not the host's failure but the scan's own load, so it must not become `unreachable`
/// (for a changed host, exit 1 where `ssh` says CHANGED). The window starts unbounded; a timeout
/// of a server known to be there (`TargetPoliteness` decides) on a connection that ran beside
/// more than `floor` others halves it (to half of what was in
/// flight beside that connection, never below `floor`), once per round: connections that
/// started before the last decrease do not decrease it again. Every success raises it by one.
/// The connection that timed out may be retried under the lower window (see
/// `TargetPoliteness.BackOff`); one that ran with `floor` or fewer connections in flight timed
/// out on its own, and a lower window could not help it.
///
/// Not thread-safe: `TargetPoliteness` holds it under its lock.
struct ConnectionWindow: Sendable {
    /// What one connection was started under: the decreases so far, and how many connections
    /// were in flight with it (itself included).
    struct Ticket: Hashable, Sendable {
        var epoch: Int
        var concurrency: Int
    }

    /// Below this many connections in flight a timeout says nothing about the scan's own load.
    let floor: Int
    /// The most connections in flight at once; `Int.max` until the first decrease.
    private(set) var limit = Int.max
    private(set) var inFlight = 0
    /// How many decreases there were.
    private(set) var epoch = 0

    init(floor: Int = 16) {
        self.floor = max(1, floor)
    }

    /// Whether one more connection may start now.
    var hasRoom: Bool { inFlight < limit }

    /// Counts a connection starting.
    mutating func open() -> Ticket {
        inFlight += 1
        return Ticket(epoch: epoch, concurrency: inFlight)
    }

    /// Counts a connection ending: a success raises the limit by one, a timeout halves it once
    /// per round when load may explain it. Returns whether it may: the connection ran beside
    /// more than `floor` others (counted when it started or when it ended, whichever is more),
    /// so a retry under the lower window could get past it.
    @discardableResult
    mutating func close(_ ticket: Ticket, succeeded: Bool, timedOut: Bool) -> Bool {
        let beside = max(ticket.concurrency, inFlight)
        let loaded = timedOut && ranBesideMany(ticket)
        inFlight = max(0, inFlight - 1)
        if loaded && ticket.epoch == epoch {
            limit = max(floor, min(limit, beside / 2))
            epoch += 1
        } else if succeeded && limit < Int.max {
            limit += 1
        }
        return loaded
    }

    /// Whether a connection started under `ticket` and ending now ran beside more than `floor`
    /// others (counted when it started or now, whichever is more).
    func ranBesideMany(_ ticket: Ticket) -> Bool {
        max(ticket.concurrency, inFlight) > floor
    }
}
