internal import InvisoCrypto
internal import InvisoFuzzSupport
internal import InvisoKit
internal import InvisoNearby
internal import InvisoNoise

/// What the fuzzer checks in InvisoNearby (docs/fuzzing.md, "Fuzzing the nearby wire"):
/// the input, whatever it is, goes through every decoder a peer on the LAN can reach.
///
/// - as a handshake payload (``NearbyHello``) and as handshake messages 1 and 2 fed to
///   fresh machines (fixed keys, so a run is reproducible);
/// - as a TCP byte stream through ``NearbyFrameDecoder`` (both roles);
/// - as a channel frame (``NearbyChannel``), a record (``NearbyRecord``), a payload
///   (``NearbyPayload``) and a file offer;
/// - as a sealed file chunk opened by ``FileChunkCipher``.
///
/// None may crash or hang; what parses must encode back to the same bytes (every format is
/// canonical), and a refused frame must leave the decoders refusing (no state change).
enum NearbyFuzzTarget {
    static let alice = try! NearbyIdentity(rawPrivateKey: SecretBytes([UInt8](repeating: 1, count: 32)))
    static let bob = try! NearbyIdentity(rawPrivateKey: SecretBytes([UInt8](repeating: 2, count: 32)))
    static let aliceStatic = try! NoiseKeyPair(rawPrivateKey: [UInt8](repeating: 3, count: 32))
    static let bobStatic = try! NoiseKeyPair(rawPrivateKey: [UInt8](repeating: 4, count: 32))
    static let ephemeral = try! NoiseKeyPair(rawPrivateKey: [UInt8](repeating: 5, count: 32))
    static let offer = try! FileOffer(
        id: FileTransferID([UInt8](repeating: 6, count: 16)), name: "a.txt", size: 100_000,
        key: SecretBytes([UInt8](repeating: 8, count: 32)))

    static func run(_ bytes: [UInt8]) {
        hello(bytes)
        handshake(bytes)
        frames(bytes)
        records(bytes)
        if let opened = try? FileChunkCipher(offer: offer).open(bytes, index: 0) {
            invariant(opened.count == bytes.count - FileChunkCipher.overhead, "a chunk opened to the wrong length")
        }
    }

    static func hello(_ bytes: [UInt8]) {
        guard let hello = try? NearbyHello(decoding: bytes) else { return }
        invariant(hello.encoded() == bytes, "a hello did not encode back to its bytes")
    }

    /// Machines made once (each signs its static key); every input gets fresh copies.
    static let responderTemplate = try! NearbyHandshake(
        role: .responder, identity: bob, name: "bob", staticKey: bobStatic, ephemeralGenerator: { ephemeral })
    static let startedInitiator: NearbyHandshake = {
        var initiator = try! NearbyHandshake(
            role: .initiator, identity: alice, name: "alice", staticKey: aliceStatic, ephemeralGenerator: { ephemeral })
        _ = try! initiator.start()
        return initiator
    }()
    static let openTransport = transport()

    /// The input as message 1 to a responder, and as message 2 to an initiator.
    static func handshake(_ bytes: [UInt8]) {
        var responder = responderTemplate
        if let step = try? responder.receive(bytes) {
            invariant(step.reply != nil && step.established == nil, "message 1 did not produce exactly a reply")
        }
        var initiator = startedInitiator
        if let step = try? initiator.receive(bytes) {
            // Only a genuine responder's message 2 can get here, and its hello was verified.
            invariant(step.established != nil, "message 2 was accepted without establishing")
        }
    }

    /// The input as a TCP stream, fed in two pieces, to decoders in the handshake and past
    /// it (where chunk frames are allowed): every byte is either in a returned frame or
    /// still buffered, unless the decoder refused the stream.
    static func frames(_ bytes: [UInt8]) {
        for (role, handshakeFrames) in [(NearbyHandshake.Role.initiator, 0), (.responder, 0), (.initiator, 1), (.responder, 2)] {
            var decoder = NearbyFrameDecoder(role: role)
            for _ in 0..<handshakeFrames {
                decoder.append(NearbyFrameDecoder.frame([0]))
                invariant((try? decoder.next()) == .message([0]), "a handshake frame was not returned")
            }
            let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
            var consumed = 0
            var messages = handshakeFrames
            var failed = false
            for piece in [bytes[..<cut], bytes[cut...]] where !failed {
                decoder.append(piece)
                while true {
                    do {
                        switch try decoder.next() {
                        case nil:
                            break
                        case .message(let body):
                            invariant(!body.isEmpty && body.count <= Int(UInt16.max), "a frame out of bounds")
                            consumed += body.count + NearbyFrameDecoder.prefixBytes
                            messages += 1
                            continue
                        case .chunk(let chunk):
                            invariant(messages >= (role == .initiator ? 1 : 2), "a chunk frame during the handshake")
                            invariant(
                                chunk.sealed.count > FileChunkCipher.overhead
                                    && chunk.sealed.count <= NearbyFrameDecoder.maxSealedChunkBytes,
                                "a chunk out of bounds")
                            invariant(
                                Array(bytes[consumed..<(consumed + NearbyFrameDecoder.chunkHeaderBytes)])
                                    == NearbyFrameDecoder.chunkHeader(
                                        transfer: chunk.transfer, index: chunk.index, sealedCount: chunk.sealed.count),
                                "a chunk header did not encode back to its bytes")
                            consumed += chunk.sealed.count + NearbyFrameDecoder.chunkHeaderBytes
                            continue
                        }
                    } catch {
                        failed = true
                    }
                    break
                }
            }
            if !failed {
                invariant(consumed + decoder.bufferedBytes == bytes.count, "the frame decoder lost or invented bytes")
            }
        }
    }

    /// The input as a channel frame (refused: no key), then as a record and a payload.
    static func records(_ bytes: [UInt8]) {
        var channel = NearbyChannel(transport: openTransport)
        if (try? channel.open(bytes)) != nil {
            invariant(false, "an unauthenticated frame opened")
        }
        invariant((try? channel.open(bytes)) == nil, "a channel accepted a frame after an error")
        if let record = try? NearbyRecord(decoding: bytes) {
            invariant(record.encoded() == bytes, "a record did not encode back to its bytes")
        }
        if let payload = try? NearbyPayload(decoding: bytes) {
            invariant(payload.encoded() == bytes, "a payload did not encode back to its bytes")
        }
        if let offer = try? FileOffer(decoding: bytes) {
            invariant(offer.encoded() == bytes, "an offer did not encode back to its bytes")
            invariant(!SafeFileName.sanitize(offer.name).contains("/"), "a sanitised name has a separator")
        }
    }

    static func transport() -> NoiseTransport {
        var initiator = try! HandshakeState(
            NoiseProtocol(NearbyHandshake.protocolName), role: .initiator, prologue: NearbyHandshake.prologue,
            localStatic: aliceStatic, ephemeralGenerator: { ephemeral })
        var responder = try! HandshakeState(
            NoiseProtocol(NearbyHandshake.protocolName), role: .responder, prologue: NearbyHandshake.prologue,
            localStatic: bobStatic, ephemeralGenerator: { ephemeral })
        _ = try! responder.readMessage(try! initiator.writeMessage())
        _ = try! initiator.readMessage(try! responder.writeMessage())
        _ = try! responder.readMessage(try! initiator.writeMessage())
        return try! responder.transport()
    }

    /// Genuine handshake messages, hellos, frames, records, payloads and a chunk.
    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        var initiator = try! NearbyHandshake(
            role: .initiator, identity: alice, name: "alice", staticKey: aliceStatic, ephemeralGenerator: { ephemeral })
        var responder = try! NearbyHandshake(
            role: .responder, identity: bob, name: "bob", staticKey: bobStatic, ephemeralGenerator: { ephemeral })
        let one = try! initiator.start()
        let two = try! responder.receive(one).reply!
        seeds += [one, two, try! initiator.receive(two).reply!]
        seeds.append(try! NearbyHello(identity: alice.publicKey, signature: [UInt8](repeating: 1, count: 64),
                                      capabilities: .all, name: "Zoë").encoded())
        seeds.append(NearbyFrameDecoder.frame(one) + NearbyFrameDecoder.frame(two))
        let text = try! NearbyText(id: [UInt8](repeating: 9, count: 16), sentAt: 1_700_000_000_000, lifetime: .day, body: "hi")
        let update = try! NearbyGroupUpdate(
            groupID: [UInt8](repeating: 1, count: 16), epoch: 2, name: "team", members: [alice.publicKey, bob.publicKey],
            distribution: [UInt8](repeating: 3, count: 150))
        let payloads: [NearbyPayload] = [
            .text(text), .lifetimeProposal(.week), .lifetimeAnswer(.month, accepted: true), .groupUpdate(update),
            .groupMessage(groupID: [UInt8](repeating: 1, count: 16), epoch: 2, ciphertext: [1, 2, 3]),
            .groupLeave(groupID: [UInt8](repeating: 1, count: 16)), .fileOffer(offer),
            .fileAnswer(offer.id, accepted: true), .fileComplete(offer.id, verified: false),
            .fileDigest(offer.id, sha256: [UInt8](repeating: 7, count: 32)), .fileCancel(offer.id),
        ]
        seeds += payloads.map { $0.encoded() }
        let sealed = FileChunkCipher(offer: offer).seal([UInt8](repeating: 0x61, count: 100), index: 0)
        let records: [NearbyRecord] = [
            .connectRequest, .connectAccept, .connectReject, .data(seq: 1, payload: payloads[0].encoded()), .ack(7),
            .fileRequest(offer.id, fromChunk: 3),
        ]
        seeds += records.map { $0.encoded() }
        let chunkFrame = NearbyFrameDecoder.chunkHeader(transfer: offer.id, index: 0, sealedCount: sealed.count) + sealed
        seeds.append(chunkFrame)
        seeds.append(NearbyFrameDecoder.frame([1, 2]) + chunkFrame + NearbyFrameDecoder.frame([3]))
        seeds.append(sealed)
        seeds.append(offer.encoded())
        return seeds
    }
}
