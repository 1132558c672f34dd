import NIOCore

/// Runs tasks on one NIO event loop.
///
/// A session's actors (``ChatClient``, its ``SignalingClient``) run on an event loop of
/// their own, so that blocking store work never holds one of the cooperative pool's few
/// threads. Their child tasks — path senders, readers, timers — prefer this executor, and
/// the signaling connection's channel lives on the same loop: a frame then goes from the
/// socket through the signaling machine and the session machine to the next write without
/// a thread switch (a switch per call cost the relay path three quarters of its throughput).
final class EventLoopTaskExecutor: TaskExecutor {
    let loop: any EventLoop

    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
