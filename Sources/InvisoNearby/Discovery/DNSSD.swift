import CDNSSD
import Dispatch

/// A service instance as DNS-SD reports it: `name._type._tcp.domain` seen on one
/// interface.
public struct DNSSDService: Sendable, Hashable, CustomStringConvertible {
    /// The instance name (the user's display name for `_inviso._tcp`).
    public let name: String
    /// The service type with a trailing dot as reported (`_inviso._tcp.`).
    public let type: String
    /// The domain (`local.`).
    public let domain: String
    /// The interface the instance was seen on (a service on two interfaces is reported twice).
    public let interfaceIndex: UInt32

    public var description: String { "\(name) (\(type)\(domain), interface \(interfaceIndex))" }
}

/// What resolving a ``DNSSDService`` gives: where it listens and its TXT record.
public struct DNSSDResolution: Sendable, Hashable {
    /// The host name (`alice-laptop.local.`); its address comes from ``DNSSD/queryIPv4(host:interfaceIndex:handler:)``.
    public let hostTarget: String
    /// The TCP port (host byte order).
    public let port: UInt16
    /// The TXT record's wire bytes.
    public let txt: [UInt8]
    /// The interface the answer came from.
    public let interfaceIndex: UInt32
}

/// A browse result: an instance appeared or went away on one interface.
public enum DNSSDBrowseEvent: Sendable, Hashable {
    /// The instance is announced on ``DNSSDService/interfaceIndex``.
    case added(DNSSDService)
    /// The instance withdrew (or expired) on ``DNSSDService/interfaceIndex``.
    case removed(DNSSDService)
    /// The browse stopped working (for example the daemon went away).
    case failed(DNSSDError)
}

/// The part of the DNS Service Discovery C API (`dns_sd.h`) that both Apple's
/// implementation and avahi's compatibility library provide: `DNSServiceRegister`,
/// `DNSServiceBrowse`, `DNSServiceResolve`, `DNSServiceQueryRecord` (for the A record,
/// since avahi has no `DNSServiceGetAddrInfo`), and `DNSServiceRefSockFD` +
/// `DNSServiceProcessResult` driven by a dispatch read source (avahi has no
/// `DNSServiceSetDispatchQueue`). Flags are always 0, the only value avahi accepts
/// everywhere.
///
/// Each call returns a running ``DNSSDOperation`` whose handler runs on the operation's
/// own serial queue until ``DNSSDOperation/cancel()``. A call fails synchronously with
/// ``DNSSDError/Code/noDaemon`` when no daemon answers.
public enum DNSSD {
    /// Announces `name` as an instance of `type` (`_inviso._tcp`) on every interface.
    ///
    /// The handler gets the registered service (with the name actually used: on a name
    /// conflict with another host the daemon may pick `name #2`) or an error.
    public static func register(
        name: String, type: String, port: UInt16, txt: TXTRecord,
        handler: @escaping @Sendable (Result<DNSSDService, DNSSDError>) -> Void
    ) throws(DNSSDError) -> DNSSDOperation {
        let bytes = txt.encoded()
        let operation = DNSSDOperation(name: "register", handler: .register(handler))
        let status = bytes.withUnsafeBytes { txtBytes in
            DNSServiceRegister(
                &operation.ref, 0, 0, name, type, nil, nil, port.bigEndian, UInt16(txtBytes.count),
                txtBytes.baseAddress, registerReply, operation.context)
        }
        try operation.start(status: status)
        return operation
    }

    /// Reports instances of `type` appearing and going away, per interface.
    public static func browse(
        type: String, handler: @escaping @Sendable (DNSSDBrowseEvent) -> Void
    ) throws(DNSSDError) -> DNSSDOperation {
        let operation = DNSSDOperation(name: "browse", handler: .browse(handler))
        let status = DNSServiceBrowse(&operation.ref, 0, 0, type, nil, browseReply, operation.context)
        try operation.start(status: status)
        return operation
    }

    /// Looks up where `service` listens and its TXT record. The handler may run more than
    /// once (the record can change); cancel the operation once the answer is used.
    public static func resolve(
        _ service: DNSSDService, handler: @escaping @Sendable (Result<DNSSDResolution, DNSSDError>) -> Void
    ) throws(DNSSDError) -> DNSSDOperation {
        let operation = DNSSDOperation(name: "resolve", handler: .resolve(handler))
        let status = DNSServiceResolve(
            &operation.ref, 0, service.interfaceIndex, service.name, service.type, service.domain, resolveReply,
            operation.context)
        try operation.start(status: status)
        return operation
    }

    /// Looks up the IPv4 addresses (A records) of `host` on one interface; the handler gets
    /// each address as four bytes as it arrives.
    public static func queryIPv4(
        host: String, interfaceIndex: UInt32, handler: @escaping @Sendable (Result<[UInt8], DNSSDError>) -> Void
    ) throws(DNSSDError) -> DNSSDOperation {
        let operation = DNSSDOperation(name: "query", handler: .query(handler))
        let status = DNSServiceQueryRecord(
            &operation.ref, 0, interfaceIndex, host, UInt16(kDNSServiceType_A), UInt16(kDNSServiceClass_IN),
            queryReply, operation.context)
        try operation.start(status: status)
        return operation
    }
}

/// A running DNS-SD operation: its `DNSServiceRef`, read by a dispatch source on a serial
/// queue that calls `DNSServiceProcessResult` whenever the daemon's socket is readable
/// (the result callbacks run there, synchronously).
///
/// ``cancel()`` stops the source; its cancel handler deallocates the reference on the same
/// queue, so a deallocation never races a callback. Dropping the last reference without
/// cancelling keeps the operation running until the process ends: cancel it.
public final class DNSSDOperation: @unchecked Sendable {
    // @unchecked: `ref` and `source` are written once before `start` returns and
    // afterwards touched only on `queue` (the source's handlers and `cancel`'s block).
    enum Handler {
        case register(@Sendable (Result<DNSSDService, DNSSDError>) -> Void)
        case browse(@Sendable (DNSSDBrowseEvent) -> Void)
        case resolve(@Sendable (Result<DNSSDResolution, DNSSDError>) -> Void)
        case query(@Sendable (Result<[UInt8], DNSSDError>) -> Void)
    }

    fileprivate var ref: DNSServiceRef?
    fileprivate let handler: Handler
    private let name: String
    private let queue: DispatchQueue
    private var source: (any DispatchSourceRead)?

    init(name: String, handler: Handler) {
        self.name = name
        self.handler = handler
        self.queue = DispatchQueue(label: "inviso.dnssd.\(name)")
    }

    /// The pointer the C callbacks get back; unretained: the source's handlers keep `self`.
    fileprivate var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    fileprivate func start(status: DNSServiceErrorType) throws(DNSSDError) {
        guard status == kDNSServiceErr_NoError, let ref else {
            if let ref { DNSServiceRefDeallocate(ref) }
            self.ref = nil
            throw DNSSDError(status: status, operation: name)
        }
        let fd = DNSServiceRefSockFD(ref)
        guard fd >= 0 else {
            DNSServiceRefDeallocate(ref)
            self.ref = nil
            throw DNSSDError(.noDaemon, operation: name)
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        // The handlers hold `self` strongly until the source is cancelled.
        source.setEventHandler { [self] in
            guard let ref = self.ref else { return }
            let result = DNSServiceProcessResult(ref)
            if result != kDNSServiceErr_NoError { fail(DNSSDError(status: result, operation: name)) }
        }
        source.setCancelHandler { [self] in
            if let ref = self.ref { DNSServiceRefDeallocate(ref) }
            self.ref = nil
            self.source = nil
        }
        self.source = source
        source.resume()
    }

    /// Stops the operation; no handler runs after the cancellation reaches the queue.
    public func cancel() {
        queue.async { [self] in
            guard let source, !source.isCancelled else { return }
            source.cancel()
        }
    }

    /// Reports `error` once and stops (the daemon went away or refused).
    fileprivate func fail(_ error: DNSSDError) {
        guard let source, !source.isCancelled else { return }
        switch handler {
        case .register(let report): report(.failure(error))
        case .browse(let report): report(.failed(error))
        case .resolve(let report): report(.failure(error))
        case .query(let report): report(.failure(error))
        }
        source.cancel()
    }

    /// Whether the operation still delivers (called on the queue by the C callbacks).
    fileprivate var isLive: Bool { source.map { !$0.isCancelled } ?? false }
}

// MARK: - C callbacks (they run inside DNSServiceProcessResult, on the operation's queue)

private func operation(_ context: UnsafeMutableRawPointer?) -> DNSSDOperation? {
    guard let context else { return nil }
    let operation = Unmanaged<DNSSDOperation>.fromOpaque(context).takeUnretainedValue()
    return operation.isLive ? operation : nil
}

private func text(_ pointer: UnsafePointer<CChar>?) -> String {
    pointer.map { String(cString: $0) } ?? ""
}

private let addFlag = DNSServiceFlags(kDNSServiceFlagsAdd)

private func registerReply(
    _ ref: DNSServiceRef?, _ flags: DNSServiceFlags, _ error: DNSServiceErrorType,
    _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?,
    _ context: UnsafeMutableRawPointer?
) {
    guard let operation = operation(context), case .register(let report) = operation.handler else { return }
    guard error == kDNSServiceErr_NoError else { return operation.fail(DNSSDError(status: error, operation: "register")) }
    report(.success(DNSSDService(name: text(name), type: text(type), domain: text(domain), interfaceIndex: 0)))
}

private func browseReply(
    _ ref: DNSServiceRef?, _ flags: DNSServiceFlags, _ interfaceIndex: UInt32, _ error: DNSServiceErrorType,
    _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?,
    _ context: UnsafeMutableRawPointer?
) {
    guard let operation = operation(context), case .browse(let report) = operation.handler else { return }
    guard error == kDNSServiceErr_NoError else { return operation.fail(DNSSDError(status: error, operation: "browse")) }
    let service = DNSSDService(name: text(name), type: text(type), domain: text(domain), interfaceIndex: interfaceIndex)
    report(flags & addFlag != 0 ? .added(service) : .removed(service))
}

private func resolveReply(
    _ ref: DNSServiceRef?, _ flags: DNSServiceFlags, _ interfaceIndex: UInt32, _ error: DNSServiceErrorType,
    _ fullName: UnsafePointer<CChar>?, _ host: UnsafePointer<CChar>?, _ port: UInt16, _ txtLength: UInt16,
    _ txt: UnsafePointer<UInt8>?, _ context: UnsafeMutableRawPointer?
) {
    guard let operation = operation(context), case .resolve(let report) = operation.handler else { return }
    guard error == kDNSServiceErr_NoError else { return operation.fail(DNSSDError(status: error, operation: "resolve")) }
    let bytes = txt.map { Array(UnsafeBufferPointer(start: $0, count: Int(txtLength))) } ?? []
    report(.success(DNSSDResolution(
        hostTarget: text(host), port: UInt16(bigEndian: port), txt: bytes, interfaceIndex: interfaceIndex)))
}

private func queryReply(
    _ ref: DNSServiceRef?, _ flags: DNSServiceFlags, _ interfaceIndex: UInt32, _ error: DNSServiceErrorType,
    _ fullName: UnsafePointer<CChar>?, _ type: UInt16, _ recordClass: UInt16, _ length: UInt16,
    _ data: UnsafeRawPointer?, _ ttl: UInt32, _ context: UnsafeMutableRawPointer?
) {
    guard let operation = operation(context), case .query(let report) = operation.handler else { return }
    guard error == kDNSServiceErr_NoError else { return operation.fail(DNSSDError(status: error, operation: "query")) }
    guard flags & addFlag != 0, type == UInt16(kDNSServiceType_A), length == 4, let data else { return }
    report(.success(Array(UnsafeRawBufferPointer(start: data, count: 4))))
}
