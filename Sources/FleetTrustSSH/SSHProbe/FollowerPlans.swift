import Synchronization

/// The followers a deciding connection leaves (`ExchangeBoard.followers(of:for:)`), worked out
/// once per server list rather than once per host.
///
/// A fleet runs a handful of server configurations, so its hosts' probes ask the same question
/// (this negotiated algorithm, this host-key list) over and over; planning it walks the list
/// with a `HostKeyPlan` and compares names, about a fifth of a host's probe logic. The answer
/// depends on nothing but the question, so it is kept: for at most `capacity` distinct questions
/// (a server's list is untrusted input, and a scan of many odd servers must not grow the cache
/// without bound; past it, the plan is worked out each time as before).
final class FollowerPlans: Sendable {
    typealias Plan = (standIns: [ExchangeBoard.Exchange], followers: [ExchangeBoard.Exchange])

    private struct Question: Hashable {
        var negotiated: String
        var offered: [String]
    }

    /// Shared by every probe of the process: the plan is a pure function of its question.
    static let shared = FollowerPlans()

    let capacity: Int
    private let plans = Mutex<[Question: Plan]>([:])

    init(capacity: Int = 64) {
        self.capacity = capacity
    }

    /// `ExchangeBoard.followers(of: negotiated, for: offered)`, from the cache when it was asked before.
    func plan(negotiated: String, offered: [String]) -> Plan {
        let question = Question(negotiated: negotiated, offered: offered)
        if let known = plans.withLock({ $0[question] }) { return known }
        let plan = ExchangeBoard.followers(of: negotiated, for: offered)
        plans.withLock { plans in
            if plans.count < capacity { plans[question] = plan }
        }
        return plan
    }

    /// How many questions are kept (for tests).
    var count: Int { plans.withLock { $0.count } }
}
