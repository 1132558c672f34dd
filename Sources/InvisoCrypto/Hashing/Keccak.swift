/// The SHA-3 family of FIPS 202, built on the Keccak-f[1600] permutation: the hash
/// functions ``SHA3_256`` and ``SHA3_512`` and the extendable-output functions ``SHAKE128``
/// and ``SHAKE256``.
///
/// The types live in this namespace because swift-crypto (and CryptoKit) have their own
/// `SHA3_256` and `SHA3_512`; a file that imports both modules writes `Keccak.SHA3_256` or
/// `Crypto.SHA3_256` and never gets an ambiguity. Ours exist because swift-crypto keeps
/// SHAKE internal, and because CryptoKit offers SHA-3 only on recent OS versions, while the
/// post-quantum code that needs both must run everywhere this package does.
///
/// All four are value types with inline state: no heap allocation per block, and copying a
/// hasher forks the computation. The state is not wiped when a hasher goes away (a struct
/// has no deinitializer): callers hashing secrets should not keep hashers longer than needed.
///
/// ```swift
/// let digest = Keccak.SHA3_256.hash(message)                            // 32 bytes
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
