/// The extendable-output functions ``SHAKE128`` and ``SHAKE256`` of FIPS 202, built on
/// the Keccak-f[1600] permutation.
///
/// SHA3-256 and SHA3-512 are swift-crypto's (`Crypto.SHA3_256`, public on every platform
/// this package supports, the OS 26 releases included); swift-crypto keeps SHAKE internal,
/// so the sponge lives here for it, in a namespace that never collides with swift-crypto's
/// names.
///
/// Both are value types with inline state: no heap allocation per block, and copying an
/// XOF forks the computation. The state is not wiped when one goes away (a struct has no
/// deinitializer): callers hashing secrets should not keep them longer than needed.
///
/// ```swift
/// let stream = Keccak.SHAKE256.hash(seed, outputByteCount: 128)         // any length
///
/// var xof = Keccak.SHAKE128()
/// xof.update(seed)
/// let first = xof.squeeze(168)       // then more, from where it left off
/// let next = xof.squeeze(168)
/// ```
///
/// Every input is valid, so nothing here throws. Asking for a negative number of output
/// bytes, or absorbing into a SHAKE after squeezing has started, is a programming error and
/// traps.
public enum Keccak {}
