import CognitoClient
import Foundation
import XCTest

@testable import AuthctlCore
@testable import authctl

/// A clock that only moves when slept on (or told to).
final class ManualClock: PaceClock {
    var time: Double = 1000
    private(set) var slept: [Double] = []
    func now() -> Double { time }
    func sleep(_ seconds: Double) {
        slept.append(seconds)
        time += seconds
    }
}

final class OpsPacingTests: XCTestCase {
    func testTokenBucketSpacesCallsAtItsRate() {
        var bucket = TokenBucket(rate: 20, capacity: 1, now: 0)
        XCTAssertEqual(bucket.take(now: 0), 0, "starts with one token")
        XCTAssertEqual(bucket.take(now: 0), 0.05, accuracy: 1e-9)
        // Waited its turn: the next one is due 1/20 s after.
        XCTAssertEqual(bucket.take(now: 0.05), 0.05, accuracy: 1e-9)
        // After a long pause it has saved at most its capacity.
        XCTAssertEqual(bucket.take(now: 10), 0)
        XCTAssertEqual(bucket.take(now: 10), 0.05, accuracy: 1e-9)
    }

    func testBucketWithABurstCapacity() {
        var bucket = TokenBucket(rate: 25, capacity: 25, now: 0)
        let waits = (0..<26).map { _ in bucket.take(now: 0) }
        XCTAssertEqual(waits.prefix(25).filter { $0 == 0 }.count, 25)
        XCTAssertEqual(waits[25], 0.04, accuracy: 1e-9)
    }

    func testPacerKeepsToTheRateOverManyCalls() {
        let clock = ManualClock()
        let pacer = Pacer(name: "t", rate: 25, clock: clock)
        let start = clock.now()
        for _ in 0..<250 {
            pacer.waitForTurn()
            pacer.succeeded()
        }
        // 250 calls at 25/s: the first two are free (the bucket holds two), the rest 1/25 s apart.
        XCTAssertEqual(clock.now() - start, 248.0 / 25, accuracy: 1e-6)
        // A slow call (0.1 s) is caught up with: the next goes at once, then the pace resumes.
        clock.time += 0.1
        let before = clock.now()
        pacer.waitForTurn()
        XCTAssertEqual(clock.now(), before, "one saved token")
    }

    func testThrottlingHalvesOncePerCooldownAndRecoversAdditively() {
        let clock = ManualClock()
        let pacer = Pacer(name: "t", rate: 20, clock: clock, floor: 0.5, increasePerSecond: 1, cooldown: 1)
        pacer.throttled()
        XCTAssertEqual(pacer.rate, 10)
        pacer.throttled()  // the same burst: not halved again
        XCTAssertEqual(pacer.rate, 10)
        XCTAssertEqual(pacer.throttles, 2)
        XCTAssertEqual(pacer.decreases, 1)
        clock.time += 1.5
        pacer.throttled()
        XCTAssertEqual(pacer.rate, 5)
        // Additive increase: about +1 call/s for every second of calls that go through.
        let before = clock.now()
        while pacer.rate < 20 {
            pacer.waitForTurn()
            pacer.succeeded()
        }
        let took = clock.now() - before
        XCTAssertGreaterThan(took, 10, "recovers slowly (took \(took) s)")
        XCTAssertLessThan(took, 20, "but recovers (took \(took) s)")
        XCTAssertEqual(pacer.rate, 20, "never above the ceiling")
    }

    func testRateNeverBelowTheFloor() {
        let clock = ManualClock()
        let pacer = Pacer(name: "t", rate: 4, clock: clock, floor: 0.5)
        for _ in 0..<20 {
            clock.time += 2
            pacer.throttled()
        }
        XCTAssertEqual(pacer.rate, 0.5)
    }

    func testProgressLine() {
        XCTAssertEqual(
            OpsProgress.line(done: 500, total: 2000, failed: 1, rate: 20, bar: false),
            "ops: 500/2000 users done (25%), 20.0/s, ETA 1:15, 1 failed")
        XCTAssertEqual(
            OpsProgress.line(done: 1000, total: 2000, failed: 0, rate: 25, bar: true),
            "[############............] 1000/2000 50%  25.0/s  ETA 0:40  0 failed")
        XCTAssertEqual(OpsProgress.clockTime(3909), "1:05:09")
        XCTAssertEqual(
            OpsProgress.line(done: 1, total: 1, failed: 0, rate: 1, bar: false),
            "ops: 1/1 user done (100%), 1.0/s, ETA 0:00, 0 failed")
    }

    /// A rate over the paced window never exceeds the pace: one user answered in 10 ms at 20 a
    /// second is not 100 a second, and a full bucket's burst is inside the window.
    func testARateOverThePacedWindowNeverExceedsThePace() {
        let pacer = Pacer(name: "t", rate: 20, clock: ManualClock())
        XCTAssertLessThanOrEqual(1 / pacer.pacedWindow(0.01), 20)
        XCTAssertLessThanOrEqual((2 + 20 * 3) / pacer.pacedWindow(3), 20)
        XCTAssertEqual(1000 / pacer.pacedWindow(50), 1000 / 50.1, accuracy: 1e-9)
        XCTAssertEqual(Format.counted(1, "user"), "1 user")
        XCTAssertEqual(Format.counted(0, "user"), "0 users")
    }
}

/// The engine against a scripted service: throttling never fails a user, pages resume where they stopped.
final class BulkOperationTests: XCTestCase {
    private func operation(
        _ cognito: FakeCognito, _ selection: UserSelection, clock: ManualClock,
        action: OpsAction = .signOut
    ) -> BulkOperation {
        let service = CognitoService(endpoint: "http://127.0.0.1:9/", transport: cognito, retryPolicy: .none)
        let op = BulkOperation(
            service: service, poolId: "eu-west-1_TestPool", action: action, selection: selection,
            rate: 20, listingRate: 25, clock: clock)
        op.random = { 0.5 }
        op.stopRequested = { 0 }
        return op
    }

    private func record(_ dir: URL) throws -> (BulkRecord, OpsStateDirectory) {
        let state = try OpsStateDirectory.open(environment: ["XDG_STATE_HOME": dir.path])
        let audit = try OpsAuditLog(path: state.auditPath("t"))
        return (
            BulkRecord(
                state: state, stem: "t", audit: audit, who: .init(accessKeyId: "AKIA", local: "me@here"), now: Date.init
            ), state
        )
    }

    private func tmp() -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ops-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    func testThrottlingIsAbsorbedAndEveryUserDone() throws {
        let cognito = FakeCognito()
        var n = 0
        cognito.handlers["AdminUserGlobalSignOut"] = { body in
            n += 1
            if n % 3 == 0 { return FakeCognito.error("TooManyRequestsException", "Rate exceeded") }
            if body["Username"] as? String == "ghost" {
                return FakeCognito.error("UserNotFoundException", "User does not exist.")
            }
            return (200, [:])
        }
        let clock = ManualClock()
        let names = (0..<130).map { "u\($0)" } + ["ghost"]
        let op = operation(cognito, .users(names), clock: clock)
        let (record, _) = try record(tmp())
        var checkpoint = OpsCheckpoint(
            userPoolId: "p", action: "signout", selection: "s", total: names.count, auditLog: record.audit.path,
            startedAt: Date(), updatedAt: Date())
        try op.run(
            &checkpoint, record: record,
            progress: OpsProgress(console: FakeConsole(), clock: clock, total: names.count, alreadyDone: 0))
        XCTAssertTrue(checkpoint.complete)
        XCTAssertEqual(checkpoint.counts, OpsCounts(done: 131, signedOut: 130, disabled: 0, notFound: 1, failed: 0))
        XCTAssertGreaterThan(op.throttled, 30)
        XCTAssertLessThan(op.updates.rate, 20, "slowed down after throttling")
        let lines = try String(contentsOfFile: record.audit.path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 131)
    }

    func testServerErrorsRetriedThenFailedWithTheirCode() throws {
        let cognito = FakeCognito()
        cognito.handlers["AdminUserGlobalSignOut"] = { body in
            body["Username"] as? String == "bad"
                ? (500, ["__type": "InternalErrorException", "message": "x"]) : (200, [:])
        }
        let clock = ManualClock()
        let op = operation(cognito, .users(["a", "bad", "b"]), clock: clock)
        XCTAssertEqual(try op.act(on: "bad").result, .failed(code: "InternalErrorException"))
        XCTAssertEqual(cognito.count("AdminUserGlobalSignOut"), op.maxAttempts)
        XCTAssertEqual(try op.act(on: "a").result, .signedOut)
    }

    func testRefusedCredentialsStopTheRun() {
        let cognito = FakeCognito()
        cognito.handlers["AdminUserGlobalSignOut"] = { _ in FakeCognito.error("AccessDeniedException", "no") }
        let op = operation(cognito, .users(["a"]), clock: ManualClock())
        XCTAssertThrowsError(try op.act(on: "a"))
    }

    func testResumesMidPageFromTheCheckpointAloneAndWritesTheLineItHeld() throws {
        let cognito = FakeCognito()
        var seen: [String] = []
        cognito.handlers["AdminUserGlobalSignOut"] = { body in
            seen.append(body["Username"] as? String ?? "")
            return (200, [:])
        }
        let pages: [String?: ([String], String?)] = [nil: (["a", "b", "c"], "t2"), "t2": (["d", "e", "f"], nil)]
        cognito.handlers["ListUsersInGroup"] = { body in
            let (users, next) = pages[body["NextToken"] as? String] ?? ([], nil)
            var answer: [String: Any] = ["Users": users.map { ["Username": $0, "Enabled": true] }]
            if let next { answer["NextToken"] = next }
            return (200, answer)
        }
        let clock = ManualClock()
        let op = operation(cognito, .group("g"), clock: clock)
        let (record, _) = try record(tmp())
        // An earlier run counted a, b, c and d, and was killed after d's checkpoint, before d's
        // audit line; someone then appended a line saying e was done.
        let entry = { (user: String) in
            OpsAuditLog.Entry(
                time: Date(), pool: "eu-west-1_TestPool", user: user, action: "signOut", result: "signedOut",
                requestIds: [], operator: record.who)
        }
        var checkpoint = OpsCheckpoint(
            userPoolId: "p", action: "signout", selection: "s", total: 6, auditLog: record.audit.path,
            startedAt: Date(), updatedAt: Date())
        checkpoint.cursor = PageCursor(token: "t2")
        checkpoint.doneInPage = 1
        checkpoint.counts = OpsCounts(done: 4, signedOut: 4)
        checkpoint.auditOffset = record.audit.size
        checkpoint.lastLine = .init(offset: record.audit.size, line: try OpsAuditLog.line(entry("d")))
        _ = try record.audit.append(try OpsAuditLog.line(entry("e")))
        try op.run(
            &checkpoint, record: record,
            progress: OpsProgress(console: FakeConsole(), clock: clock, total: 6, alreadyDone: 4))
        XCTAssertEqual(seen, ["e", "f"], "the log never says who is done: e is acted on")
        XCTAssertEqual(checkpoint.counts.done, 6)
        XCTAssertTrue(checkpoint.complete)
        let users = try String(contentsOfFile: record.audit.path, encoding: .utf8).split(separator: "\n")
            .compactMap { try? OpsStateDirectory.decoder.decode(OpsAuditLog.Entry.self, from: Data($0.utf8)).user }
        XCTAssertEqual(users, ["e", "d", "e", "f"], "d's line, held by the checkpoint, is written once")
    }

    func testFailedUsersAreKeptInTheCheckpointAndCountsNeverGoNegative() throws {
        let cognito = FakeCognito()
        cognito.handlers["AdminUserGlobalSignOut"] = { body in
            body["Username"] as? String == "b" ? FakeCognito.error("InvalidParameterException", "no") : (200, [:])
        }
        let clock = ManualClock()
        let op = operation(cognito, .users(["a", "b", "c"]), clock: clock)
        let (record, _) = try record(tmp())
        var checkpoint = OpsCheckpoint(
            userPoolId: "p", action: "signout", selection: "s", total: 3, auditLog: record.audit.path,
            startedAt: Date(), updatedAt: Date())
        try op.run(
            &checkpoint, record: record,
            progress: OpsProgress(console: FakeConsole(), clock: clock, total: 3, alreadyDone: 0))
        XCTAssertEqual(checkpoint.failedUsers, ["b"])
        XCTAssertEqual(checkpoint.counts.failed, 1)

        var counts = OpsCounts(done: 10, signedOut: 7, disabled: 0, notFound: 1, failed: 2)
        counts.absorb(retry: OpsCounts(done: 2, signedOut: 1, disabled: 0, notFound: 0, failed: 1), stillFailing: 1)
        XCTAssertEqual(counts, OpsCounts(done: 10, signedOut: 8, disabled: 0, notFound: 1, failed: 1))
        // A retry that did more than had failed (what a forged log made it do) cannot make it negative.
        counts.absorb(retry: OpsCounts(done: 3, signedOut: 3), stillFailing: 0)
        XCTAssertEqual(counts.failed, 0)
    }

    func testUsersFileSkipsBlanksAndComments() throws {
        let dir = tmp()
        let path = dir.appendingPathComponent("users.txt").path
        try "# incident 42\nalice\n\n  bob  \n#carol\ndave".write(toFile: path, atomically: true, encoding: .utf8)
        let source = try FileSource(path: path, start: PageCursor())
        XCTAssertEqual(try source.nextPage(), ["alice", "bob", "dave"])
        XCTAssertNil(try source.nextPage())
        let resumed = try FileSource(path: path, start: PageCursor(line: 3))
        XCTAssertEqual(try resumed.nextPage(), ["bob", "dave"])
    }

    /// Workers on connections of their own, answers of varied latency: commits still in order.
    private func workers(_ count: Int, latency: @escaping (String) -> Double) -> [CognitoService] {
        (0..<count).map { _ in
            let cognito = FakeCognito()
            cognito.handlers["AdminUserGlobalSignOut"] = { body in
                Thread.sleep(forTimeInterval: latency(body["Username"] as? String ?? ""))
                return (200, [:])
            }
            return CognitoService(endpoint: "http://127.0.0.1:9/", transport: cognito, retryPolicy: .none)
        }
    }

    func testCallsSideBySideAreCommittedInOrder() throws {
        let names = (0..<60).map { "u\($0)" }
        let op = operation(FakeCognito(), .users(names), clock: ManualClock())
        op.workers = workers(4) { name in name.hasSuffix("3") ? 0.02 : 0.001 }
        var order: [Int] = []
        try op.actInOrder(names) { index, outcome in
            XCTAssertEqual(outcome.result, .signedOut)
            order.append(index)
        }
        XCTAssertEqual(order, Array(0..<60))
    }

    func testAStopCommitsAPrefixAndThrows() {
        let names = (0..<60).map { "u\($0)" }
        let op = operation(FakeCognito(), .users(names), clock: ManualClock())
        op.workers = workers(4) { _ in 0.002 }
        var order: [Int] = []
        let lock = NSLock()
        op.stopRequested = { lock.withLock { order.count >= 20 ? Int32(SIGINT) : 0 } }
        XCTAssertThrowsError(try op.actInOrder(names) { index, _ in lock.withLock { order.append(index) } }) { error in
            XCTAssertTrue(error is OpsInterrupted, "\(error)")
        }
        XCTAssertEqual(order, Array(0..<order.count), "a prefix, in order")
        XCTAssertLessThan(order.count, 60)
    }
}

/// A multi-step action's steps: each in the checkpoint as it ends, so a rerun does only the rest.
final class StepLedgerTests: XCTestCase {
    /// Steps one, two, three for each user; the run stops (as a kill would) in user b's step two.
    private final class ScriptedSteps: UserSteps {
        var made: [String] = []
        var stopAt: String?

        func perform(
            _ username: String, using service: CognitoService, done: Set<String>, operation: BulkOperation,
            finished: (StepOutcome) throws -> Void
        ) throws -> OpsResult {
            for step in ["one", "two", "three"] where !done.contains(step) {
                if stopAt == "\(username):\(step)" { throw OpsInterrupted(signal: 9) }
                made.append("\(username):\(step)")
                try finished(StepOutcome(step: step, result: "done"))
            }
            return .signedOut
        }
    }

    func testARerunDoesOnlyTheStepsLeftAndEachIsAuditedOnce() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("steps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let state = try OpsStateDirectory.open(environment: ["XDG_STATE_HOME": dir.path])
        let audit = try OpsAuditLog(path: state.auditPath("t"))
        let record = BulkRecord(
            state: state, stem: "t", audit: audit, who: .init(accessKeyId: "AKIA", local: "me@here"), now: Date.init)
        let clock = ManualClock()
        let service = CognitoService(endpoint: "http://127.0.0.1:9/", transport: FakeCognito(), retryPolicy: .none)
        let op = BulkOperation(
            service: service, poolId: "p", action: .contain, selection: .users(["a", "b", "c"]), rate: 20,
            listingRate: 25, clock: clock)
        op.stopRequested = { 0 }
        let steps = ScriptedSteps()
        steps.stopAt = "b:two"
        op.steps = steps
        var checkpoint = OpsCheckpoint(
            userPoolId: "p", action: "contain", selection: "s", total: 3, auditLog: audit.path, startedAt: Date(),
            updatedAt: Date())
        let progress = { OpsProgress(console: FakeConsole(), clock: clock, total: 3, alreadyDone: 0) }
        XCTAssertThrowsError(try op.run(&checkpoint, record: record, progress: progress()))
        let saved = try XCTUnwrap(try state.load("t"))
        XCTAssertEqual(saved.stepsDone, ["b": ["one"]], "a counted user's steps are dropped, b's first kept")
        steps.stopAt = nil
        var resumed = saved
        try op.run(&resumed, record: record, progress: progress())
        XCTAssertEqual(
            steps.made, ["a:one", "a:two", "a:three", "b:one", "b:two", "b:three", "c:one", "c:two", "c:three"])
        XCTAssertNil(resumed.stepsDone)
        let lines = try String(contentsOfFile: audit.path, encoding: .utf8).split(separator: "\n")
            .compactMap { try? OpsStateDirectory.decoder.decode(OpsAuditLog.Entry.self, from: Data($0.utf8)) }
        let stepLines = lines.filter { $0.action.hasPrefix("contain:") }.map { "\($0.user):\($0.action.dropFirst(8))" }
        XCTAssertEqual(stepLines, steps.made, "every step once in the audit log")
    }
}
