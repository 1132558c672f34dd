import ArgumentParser

/// A direct parse of `inviso invite`, `join` and `resume` in their usual forms, without
/// ArgumentParser.
///
/// These commands start the processes on the way to a chat's first message, and
/// ArgumentParser's parse reflects the command's properties, casting each property
/// wrapper type to its protocols: a conformance lookup that scans all of the binary's
/// conformance records, several times per process (`docs/cli.md`). This reads the same
/// options into the same command values; anything it does not know — help, completion
/// requests, `--`, an unknown or repeated option, a missing or dash-led value, a value
/// that does not validate — returns `nil`, and ArgumentParser parses the whole command
/// line as always, with its usual messages. `ChatCommandLineTests` checks that both
/// parses give the same values.
enum ChatCommandLine {
    /// The command `arguments` (without the program name) asks for, or `nil` to leave it
    /// to ArgumentParser.
    static func command(_ arguments: [String]) -> (any AsyncParsableCommand)? {
        guard let name = arguments.first else { return nil }
        let isInvite = name == "invite"
        guard isInvite || name == "join" || name == "resume" else { return nil }
        guard let read = Reading(Array(arguments.dropFirst()), invite: isInvite, resume: name == "resume") else { return nil }
        do {
            try read.options.validate()
            try read.naming.validate()
            switch name {
            case "invite":
                guard read.positionals.isEmpty else { return nil }
                var command = InviteCommand()
                command.options = read.options
                command.naming = read.naming
                command.display = read.display
                command.expires = read.expires ?? "5m"
                try command.validate()
                return command
            case "join":
                guard read.positionals.count == 1 else { return nil }
                var command = JoinCommand()
                command.invite = read.positionals[0]
                command.options = read.options
                command.naming = read.naming
                command.text = read.text
                return command
            default:
                guard read.positionals.count == 1 else { return nil }
                var command = ResumeCommand()
                command.sessionID = read.positionals[0]
                command.options = read.options
                command.text = read.text
                return command
            }
        } catch {
            return nil
        }
    }

    /// The options and positionals of one command line.
    private struct Reading {
        var options = ChatOptions()
        var naming = SessionNaming()
        var display = QRDisplayOptions()
        var text = TextStyleOptions()
        var expires: String?
        var positionals: [String] = []

        /// `nil` when anything is not one of the forms this reads.
        init?(_ arguments: [String], invite: Bool, resume: Bool) {
            // Every property of the option groups is set: a parsed value's wrapper is read
            // only after it was given one.
            options.server = nil
            options.data = nil
            options.json = false
            options.noDirect = false
            options.linger = 30
            options.downloads = nil
            options.fileRate = nil
            naming.ephemeral = false
            naming.name = nil
            naming.displayName = nil
            display.noUnicode = false
            display.invert = false
            text.noUnicode = false
            var seen: Set<String> = []
            var index = 0
            while index < arguments.count {
                let argument = arguments[index]
                index += 1
                guard argument.hasPrefix("-") else {
                    positionals.append(argument)
                    continue
                }
                var key = argument
                var attached: String?
                if let equals = argument.firstIndex(of: "=") {
                    key = String(argument[..<equals])
                    attached = String(argument[argument.index(after: equals)...])
                }
                guard seen.insert(key).inserted else { return nil }
                // A value: attached (`--server=URL`) or the next argument, never one that
                // starts with a dash (ArgumentParser may read that as an option).
                func value() -> String? {
                    if let attached { return attached }
                    guard index < arguments.count, !arguments[index].hasPrefix("-") else { return nil }
                    index += 1
                    return arguments[index - 1]
                }
                switch key {
                case "--server": guard let value = value() else { return nil }; options.server = value
                case "--data": guard let value = value() else { return nil }; options.data = value
                case "--downloads": guard let value = value() else { return nil }; options.downloads = value
                case "--name" where !resume: guard let value = value() else { return nil }; naming.name = value
                case "--as" where !resume: guard let value = value() else { return nil }; naming.displayName = value
                case "--file-rate":
                    guard let value = value(), let rate = ByteRate(argument: value) else { return nil }
                    options.fileRate = rate
                case "--linger":
                    guard let value = value(), let seconds = Int(value) else { return nil }
                    options.linger = seconds
                case "--expires" where invite: guard let value = value() else { return nil }; expires = value
                case "--ephemeral" where !resume && attached == nil: naming.ephemeral = true
                case "--json" where attached == nil: options.json = true
                case "--no-direct" where attached == nil: options.noDirect = true
                case "--no-unicode" where attached == nil:
                    if invite { display.noUnicode = true } else { text.noUnicode = true }
                case "--invert-qr" where invite && attached == nil: display.invert = true
                default: return nil
                }
            }
        }
    }
}
