#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension UserInvestigation {
    /// For a person: every outside string escaped (UntrustedText), one fact a line.
    package var text: [String] {
        func t(_ value: String?) -> String { value.map { UntrustedText($0).description } ?? "-" }
        func when(_ date: Date?) -> String { date.map(Format.localTime) ?? "-" }
        var lines = [
            "\(t(user)): \(t(status)), \(enabled == false ? "DISABLED" : enabled == true ? "enabled" : "-"); created \(when(created)), modified \(when(modified))",
            "  MFA: \(mfaEnabled.isEmpty ? "none" : mfaEnabled.map(t).joined(separator: ", "))\(preferredMfa.map { " (preferred \(t($0)))" } ?? ""); verified email \(verifiedEmail ? "yes" : "no"), phone \(verifiedPhone ? "yes" : "no")",
        ]
        if let factors {
            let named = factors.map { factor in
                t(factor.name)
                    + (factor.mfaOnly
                        ? " (MFA only)"
                        : factor.name == "WEB_AUTHN" ? " (passkeys: no administrator can remove them)" : "")
            }
            lines.append("  Factors: " + (named.isEmpty ? "none" : named.joined(separator: ", ")))
        } else {
            lines.append("  Factors: unknown (\(t(factorsNote)))")
        }
        lines.append("  Groups: " + (groups.isEmpty ? "none" : groups.map(t).joined(separator: ", ")))
        if let devicesNote {
            lines.append("  Devices: \(t(devicesNote))")
        } else {
            lines.append("  Devices: \(devices.count)")
            lines += devices.prefix(50).map { device in
                "    \(t(device.name)) key \(t(device.key)), \(device.remembered == true ? "remembered (skips MFA)" : "not remembered"), last seen \(when(device.lastSeen)) from \(t(device.lastIp))"
            }
        }
        if let sessions {
            lines.append("  Sessions: \(sessions.count)")
            lines += sessions.prefix(50).map { session in
                "    \(t(session.kind)) \(t(session.id)) client \(t(session.clientId)), device \(t(session.device)), from \(t(session.lastIp)) \(t(session.location)), last active \(when(session.lastActive))"
            }
        } else {
            lines.append("  Sessions: \(t(sessionsNote))")
        }
        if let events, !events.isEmpty {
            lines.append(
                "  Sign-in events: \(events.count)\(eventsTruncated ? " (more not read: --max-events)" : ""), newest first"
            )
            lines += events.map { event in
                "    \(when(event.time)) \(t(event.type)) \(t(event.response)), risk \(t(event.riskLevel))/\(t(event.riskDecision))\(event.compromisedCredentials == true ? ", compromised credentials" : ""), from \(t(event.ip)) \(t(event.city)), \(t(event.country)), device \(t(event.device)), id \(t(event.id))\(event.feedback.map { ", feedback \(t($0))" } ?? "")"
            }
        } else {
            lines.append("  Sign-in events: \(t(eventsNote ?? "none"))")
        }
        return lines
    }
}
