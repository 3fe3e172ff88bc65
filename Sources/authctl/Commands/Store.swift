import ArgumentParser
import AuthctlCore

/// `authctl store`: where the profiles' sessions and caches are kept.
struct Store: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Check the stores on this host, or move a profile's items to another store.",
        discussion: """
            Stores: secret-service (the desktop keyring, the default), kernel-keyring (the Linux \
            kernel's key retention service: kernel memory, lost at reboot) and file (one file per \
            profile under $XDG_STATE_HOME/authctl/, encrypted in the age format with a passphrase). \
            A profile's store is recorded in its config the first time it keeps something.
            """,
        subcommands: [StoreDoctor.self, StoreMigrate.self])
}
