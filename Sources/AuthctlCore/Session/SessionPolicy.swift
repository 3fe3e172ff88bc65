import CognitoClient
import LocalFormats

/// What `ProfileSession.withFreshSession` does when the service refuses a call made with the
/// session: the one policy every command states instead of copying the loop or wrapping errors
/// past it.
package struct SessionPolicy {
    /// What a refusal that ends the session does.
    package enum EndingRefusal {
        /// The session is ended here (removed) and `SessionError.ended` thrown.
        case endSession
        /// Handed back as `SessionOutcome.refused`, the session still kept, for a command that
        /// ends it its own way (`signout --global` reports what it revoked).
        case handBack
    }

    /// An access token refused as expired is refreshed once and the calls run again (refused as
    /// expired once more: `SessionError.clockSkew`, the session kept).
    package var refreshesOnExpiry = true
    /// Which refusals end the session (CognitoClient's `endsSession`, unless the refusal table's
    /// row for the call's step keeps the session: a wrong current password).
    package var endsSession: (CognitoError) -> Bool = { $0.endsSession }
    package var onEndingRefusal = EndingRefusal.endSession
    /// What any other refusal becomes (the command's message), given the service that refused.
    package var otherRefusal: (CognitoError, CognitoService) -> Error = { error, _ in error }

    package init(
        endsSession: @escaping (CognitoError) -> Bool = { $0.endsSession },
        onEndingRefusal: EndingRefusal = .endSession,
        otherRefusal: @escaping (CognitoError, CognitoService) -> Error = { error, _ in error }
    ) {
        self.endsSession = endsSession
        self.onEndingRefusal = onEndingRefusal
        self.otherRefusal = otherRefusal
    }

    /// The policy of a call at `step`: a refusal ends the session as the refusal table says
    /// there (`RefusalTable.endsSession`).
    package init(
        at step: RefusalStep,
        otherRefusal: @escaping (CognitoError, CognitoService) -> Error = { error, _ in error }
    ) {
        self.init(endsSession: { RefusalTable.endsSession($0, at: step) }, otherRefusal: otherRefusal)
    }

    /// Refresh once on expiry, end the session on a refusal that ends it, throw anything else.
    package static var standard: SessionPolicy { SessionPolicy() }
}

/// How a run under a `SessionPolicy` ended, when it did not throw.
package enum SessionOutcome<Value> {
    /// The calls ran; their value.
    case completed(Value)
    /// A refusal that ends the session, handed back (`EndingRefusal.handBack`); the session as
    /// it was last used, still kept.
    case refused(CognitoError, session: StoredSession)
}

extension SessionOutcome {
    /// The calls' value; a handed-back refusal is thrown as it is.
    package func get() throws -> Value {
        switch self {
        case .completed(let value): return value
        case .refused(let error, _): throw error
        }
    }
}
