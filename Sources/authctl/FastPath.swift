import ArgumentParser
import AuthctlCore
import SecureStore

/// The second front door of the hot commands (`token`, `kube-token`, `aws-credentials`, which
/// kubectl and the AWS CLI run before every request, and `whoami`, whose one request is cheaper
/// than ArgumentParser's parse of it): a table-driven parser of exactly their
/// hot-case options that runs the same work as the ArgumentParser command, without
/// ArgumentParser's reflection (most of such a call's instructions; docs/performance.md). It
/// declines anything it does not recognise with certainty (an unknown, declined or repeated
/// option, a missing, empty or dash-led value, a value that fails its check, `--`), and then
/// ArgumentParser parses the whole line as before, so every message and exit code for unusual
/// input stays ArgumentParser's. FastPathTests drives both doors over lines generated from
/// `--experimental-dump-help`: same values or a decline, and every option classified.
enum FastPath {
    /// The options of a hot command, each taken (parsed here) or declined (left to ArgumentParser).
    struct Table {
        var taken: Set<String>
        var declined: Set<String>
    }

    /// The global options, all taken: they are plain values.
    static let globalTaken: Set<String> = [
        "--profile", "--user-pool-id", "--client-id", "--region", "--endpoint", "--failover-region",
        "--failover-endpoint", "--ca-bundle", "--timeout", "--output", "--store", "--passphrase-fd",
    ]
    /// ArgumentParser's own flags (its help and version text is its own), and `--debug`: a traced
    /// run is not the hot case.
    static let builtIn: Set<String> = ["--help", "-h", "--version", "--debug"]

    static let tables: [String: Table] = [
        "token": Table(
            taken: globalTaken.union(["--type", "--min-valid"]),
            declined: builtIn.union([
                // A signature check fetches keys; the others sign in, exchange or mint tokens.
                "--verify", "--username", "--password-stdin", "--flow", "--method", "--code", "--mfa-code",
                "--mfa-type", "--fido-device", "--pin-fd", "--client-credentials", "--scope", "--no-store",
                "--domain", "--audience", "--resource", "--actor-token-stdin",
            ])),
        "kube-token": Table(taken: globalTaken.union(["--type", "--min-valid"]), declined: builtIn),
        "aws-credentials": Table(
            taken: globalTaken.union(["--identity-pool-id", "--role-arn", "--provider-name", "--format"]),
            declined: builtIn),
        // Its flags take no value (this parser reads option-value pairs): a line with one declines.
        "whoami": Table(taken: globalTaken, declined: builtIn.union(["--verify", "--factors"])),
    ]

    /// The command line (without the program name) as a hot invocation, or nil: ArgumentParser's.
    static func parse(_ arguments: [String]) -> HotInvocation? {
        // The name first: any other command declines before the tables are built (0.46 M
        // instructions of hashing, which `--version` and every other command would pay).
        guard let name = arguments.first, ["token", "kube-token", "aws-credentials", "whoami"].contains(name),
            let table = tables[name]
        else { return nil }
        var values: [String: String] = [:]
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            let option: String
            let value: String
            if let equals = argument.firstIndex(of: "=") {
                option = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            } else {
                guard let next = rest.popFirst() else { return nil }
                option = argument
                value = next
            }
            guard table.taken.contains(option), values[option] == nil, let first = value.first, first != "-"
            else { return nil }
            values[option] = value
        }
        return invocation(name, values)
    }

    /// The parsed values, checked as the commands' `validate()` checks them; nil when a check
    /// fails (ArgumentParser says why).
    private static func invocation(_ name: String, _ values: [String: String]) -> HotInvocation? {
        var global = GlobalValues()
        global.profile = values["--profile"]
        global.userPoolId = values["--user-pool-id"]
        global.clientId = values["--client-id"]
        global.region = values["--region"]
        global.endpoint = values["--endpoint"]
        global.failoverRegion = values["--failover-region"]
        global.failoverEndpoint = values["--failover-endpoint"]
        global.caBundle = values["--ca-bundle"]
        if let text = values["--timeout"] {
            guard let timeout = Double(text), timeout > 0 && timeout <= 3600 else { return nil }
            global.timeout = timeout
        }
        if let text = values["--output"] {
            guard let output = OutputFormat(rawValue: text) else { return nil }
            global.output = output
        }
        if let text = values["--store"] {
            guard let store = StoreKind(rawValue: text) else { return nil }
            global.store = store
        }
        if let text = values["--passphrase-fd"] {
            guard let fd = Int32(text), fd >= 0 else { return nil }
            global.passphraseFd = fd
        }
        switch name {
        case "token", "kube-token":
            var type: TokenType = name == "token" ? .access : .id
            if let text = values["--type"] {
                guard let given = TokenType(rawValue: text) else { return nil }
                type = given
            }
            var minValid: Double = 60
            if let text = values["--min-valid"] {
                guard let given = Double(text), (0...86_400).contains(given) else { return nil }
                minValid = given
            }
            return HotInvocation(
                global: global,
                work: name == "token" ? .token(type, minValid: minValid) : .kubeToken(type, minValid: minValid))
        case "whoami":
            return HotInvocation(global: global, work: .whoami(verify: false, factors: false))
        default:
            let choice = IdentityPoolChoice(
                identityPoolId: values["--identity-pool-id"], roleArn: values["--role-arn"],
                providerName: values["--provider-name"])
            if let roleArn = choice.roleArn, !IdentityPoolChoice.isRoleARN(roleArn) { return nil }
            var format = AWSCredentialsFormat.process
            if let text = values["--format"] {
                guard let given = AWSCredentialsFormat(rawValue: text) else { return nil }
                format = given
            }
            if global.output == .json && format == .env { return nil }
            return HotInvocation(global: global, work: .awsCredentials(choice, format: format))
        }
    }
}

/// The global options as plain values, as either front door parsed them.
struct GlobalValues: Equatable {
    var profile: String?
    var userPoolId: String?
    var clientId: String?
    var region: String?
    var endpoint: String?
    var failoverRegion: String?
    var failoverEndpoint: String?
    var caBundle: String?
    var timeout: Double?
    var output: OutputFormat = .text
    var store: StoreKind?
    var passphraseFd: Int32?
    /// Always nil on the fast path, which declines `--debug` (a trace run is not the hot case).
    var debug: TraceFormat?

    var invocationOptions: InvocationOptions {
        InvocationOptions(
            settings: GlobalSettingsInput(
                profile: profile, userPoolId: userPoolId, clientId: clientId, region: region, endpoint: endpoint,
                failoverRegion: failoverRegion, failoverEndpoint: failoverEndpoint, caBundle: caBundle,
                timeout: timeout),
            output: output, store: store, passphraseFD: passphraseFd, debug: debug)
    }
}

extension GlobalOptions {
    var values: GlobalValues {
        GlobalValues(
            profile: profile, userPoolId: userPoolId, clientId: clientId, region: region, endpoint: endpoint,
            failoverRegion: failoverRegion, failoverEndpoint: failoverEndpoint, caBundle: caBundle, timeout: timeout,
            output: output, store: store, passphraseFd: passphraseFd, debug: debug)
    }
}

/// A hot command with its values: what `FastPath` parsed, or what the ArgumentParser command
/// holds (`hotInvocation`, compared by FastPathTests).
struct HotInvocation: Equatable {
    enum Work: Equatable {
        case token(TokenType, minValid: Double)
        case kubeToken(TokenType, minValid: Double)
        case awsCredentials(IdentityPoolChoice, format: AWSCredentialsFormat)
        case whoami(verify: Bool, factors: Bool)
    }

    var global: GlobalValues
    var work: Work

    /// The same run as the ArgumentParser command's (`LiveRun`, then the command's own work).
    func run() throws {
        let mayPrompt: ([String: String]) -> Bool
        if case .kubeToken = work { mayPrompt = KubeToken.mayPrompt(environment:) } else { mayPrompt = { _ in true } }
        try LiveRun.run(
            global.invocationOptions, mayPrompt: mayPrompt, timeoutScope: .wholeCommand, directoryWrite: false
        ) {
            context in
            switch work {
            case .token(let type, let minValid):
                try Token.printToken(type, minValid: minValid, verify: false, in: context)
            case .kubeToken(let type, let minValid):
                try KubeToken.printCredential(type, minValid: minValid, in: context)
            case .awsCredentials(let choice, let format):
                try AWSCredentialsCommand.printCredentials(choice, format: format, in: context)
            case .whoami(let verify, let factors):
                try WhoAmI.showIdentity(verify: verify, factors: factors, in: context)
            }
        }
    }
}

/// The ArgumentParser side of the hot commands, for FastPathTests: the values the command parsed
/// in `HotInvocation`'s terms (its other options, which the fast path declines, are not in it).
protocol HotCommand {
    var hotInvocation: HotInvocation { get }
}

extension Token: HotCommand {
    var hotInvocation: HotInvocation {
        HotInvocation(global: global.values, work: .token(freshness.type(), minValid: freshness.minValid))
    }
}

extension KubeToken: HotCommand {
    var hotInvocation: HotInvocation {
        HotInvocation(
            global: global.values, work: .kubeToken(freshness.type(default: .id), minValid: freshness.minValid))
    }
}

extension AWSCredentialsCommand: HotCommand {
    var hotInvocation: HotInvocation {
        HotInvocation(global: global.values, work: .awsCredentials(identityPool.choice, format: format))
    }
}

extension WhoAmI: HotCommand {
    var hotInvocation: HotInvocation {
        HotInvocation(global: global.values, work: .whoami(verify: verify, factors: factors))
    }
}
