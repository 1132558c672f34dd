import Foundation

/// The process's open-file limit (`RLIMIT_NOFILE`).
enum DescriptorLimit {
    /// Raises the soft limit to the hard one (and the hard one as far as the process may);
    /// returns both afterwards, `(0, 0)` where the platform has no such limit.
    static func raise() -> (soft: UInt64, hard: UInt64) {
        #if canImport(Glibc)
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        var wanted = rlimit(rlim_cur: 1 << 18, rlim_max: max(limit.rlim_max, 1 << 18))
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &wanted) != 0 {
            wanted = rlimit(rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &wanted)
        }
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
        #elseif canImport(Darwin)
        var limit = rlimit()
        getrlimit(RLIMIT_NOFILE, &limit)
        var wanted = rlimit(rlim_cur: min(limit.rlim_max, rlim_t(OPEN_MAX)), rlim_max: limit.rlim_max)
        _ = setrlimit(RLIMIT_NOFILE, &wanted)
        getrlimit(RLIMIT_NOFILE, &limit)
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
        #else
        return (0, 0)
        #endif
    }

    /// The connection cap for a server: the soft limit minus a reserve for the store, logs
    /// and the listening socket (256, or a quarter of a small limit); `nil` when unknown.
    static func connectionCap(soft: UInt64) -> Int? {
        guard soft > 0, soft < UInt64(Int.max) else { return nil }
        let reserve = min(256, soft / 4)
        return Int(soft - reserve)
    }
}
