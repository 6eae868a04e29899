import Testing
import TetherCore

/// The level of each record kind (`LogRecord.level`), on swift-log's scale: what a log sink at a minimum level passes.
@Suite struct LogLevelTests {
    func record(_ event: LogRecord.Event, to: SessionPhase = .waiting) -> LogRecord {
        LogRecord(generation: 1, time: 0, from: .open, to: to, event: event)
    }

    @Test func eachKindHasTheLevelTheDocsGive() {
        let levels: [(LogRecord.Event, LogLevel)] = [
            (.ping, .trace), (.pong(rtt: 3), .trace), (.message(bytes: 9), .trace),
            (.greeting, .debug), (.pongDeadlineMoved(deadline: 5), .debug), (.readingHeld, .debug),
            (.readingResumed, .debug), (.stale(ignored: .pong), .debug),
            (.connecting(attempt: 0), .info), (.redirected(status: 302, location: "ws://b/"), .info),
            (.retryScheduled(attempt: 1, delay: 1_000), .info), (.reconnectRequested, .info), (.background, .info),
            (.foreground, .info), (.stopped, .info),
            (.opened, .notice), (.path(.unavailable), .notice), (.handover(.moved), .notice),
            (.gaveUp(reason: .receiveFailed, attempt: 3), .error),
        ]
        for (event, level) in levels {
            #expect(self.record(event).level == level, "\(event)")
        }
    }

    @Test func aCloseIsInfoWhenAskedForWarningWhenLostAndErrorWhenTheSessionFailed() {
        for reason in [CloseReason.userStopped, .enteredBackground, .handedOver] {
            #expect(self.record(.closed(reason: reason, code: 1000), to: .stopped).level == .info)
        }
        for reason in [CloseReason.pongTimeout, .receiveFailed, .peerClosed(code: 1001), .connectTimeout,
                       .handshakeRejected(status: 503)] {
            #expect(self.record(.closed(reason: reason, code: nil)).level == .warning)
        }
        let failed = self.record(.closed(reason: .redirectFailed(.loop), code: 302), to: .failed)
        #expect(failed.level == .error)
    }

    @Test func levelsAreOrderedAndNamedAsSwiftLogNamesThem() {
        #expect(LogLevel.allCases == [.trace, .debug, .info, .notice, .warning, .error])
        #expect(LogLevel.allCases.map(\.description) == ["trace", "debug", "info", "notice", "warning", "error"])
        #expect(LogLevel.trace < .debug && LogLevel.warning < .error && !(LogLevel.info < .info))
    }

    @Test func aRedirectRecordHasItsStatusAndLocationAsFields() {
        let event = LogRecord.Event.redirected(status: 307, location: "wss://c.example:8443/feed")
        #expect(event.fields.map(\.name) == ["status", "location"])
        #expect(event.fields.map(\.value.description) == ["307", "wss://c.example:8443/feed"])
        #expect(self.record(event).kind == .redirected && LogRecord.Kind.redirected.rawValue == "redirected")
    }
}
