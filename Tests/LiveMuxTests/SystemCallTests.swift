import Foundation
import POSIX
import Synchronization
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `syscall(where:)` and its non-blocking and closing forms, on real descriptors and a real signal:
/// EINTR is retried, errno is the call's own, and the error names the call (issue 27, item 4).
final class SystemCallTests: XCTestCase {
    /// What the reading thread shares with the test.
    final class Reader: Sendable {
        let calls = Atomic<Int>(0)
        let thread = Atomic<UInt>(0)
        let result = Atomic<Int>(-2)
        let done = DispatchSemaphore(value: 0)
    }

    func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        try syscall(where: "pipe") { pipe(&fds) }
        addTeardownBlock { for fd in fds { _ = close(fd) } }
        return (fds[0], fds[1])
    }

    func testAFailureCarriesItsErrnoAndNamesTheCall() {
        XCTAssertThrowsError(try syscall(where: "open") { open("/nonexistent-livemux/x", O_RDONLY) }) { error in
            guard let error = error as? SystemCallError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.errno, ENOENT)
            XCTAssertEqual(error.call.description, "open")
            XCTAssertEqual(error.message, "No such file or directory")
            XCTAssertEqual(error.description, "open: No such file or directory")
        }
    }

    /// errno is read before anything after the call runs: code that runs later and sets errno
    /// again (here a second failing call) does not change the error.
    func testErrnoIsTheCallsOwn() {
        do {
            try syscall(where: "close") { close(-1) }  // EBADF
            XCTFail("close(-1) succeeded")
        } catch {
            _ = open("/nonexistent-livemux/x", O_RDONLY)  // sets errno to ENOENT
            XCTAssertEqual(error.errno, EBADF)
        }
    }

    /// A read blocked on a pipe is interrupted by a signal whose handler does not ask for restarts
    /// (no SA_RESTART): the kernel returns EINTR, and `syscall` reads again until the byte comes.
    func testACallInterruptedByASignalIsRetried() throws {
        let (readEnd, writeEnd) = try makePipe()
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        action.sa_flags = 0
        var previous = sigaction()
        XCTAssertEqual(sigaction(SIGUSR1, &action, &previous), 0)
        defer { sigaction(SIGUSR1, &previous, nil) }

        let reader = Reader()
        let thread = Thread {
            reader.thread.store(UInt(pthread_self()), ordering: .releasing)
            var byte: UInt8 = 0
            let n = try? syscall(where: "read") { () -> Int in
                reader.calls.add(1, ordering: .relaxed)
                return read(readEnd, &byte, 1)
            }
            reader.result.store(n ?? -1, ordering: .relaxed)
            reader.done.signal()
        }
        thread.start()
        // Signal the reader until it has been interrupted and read again, or has given up (or 10 s pass).
        waitUntil(deadline: 10, every: 0.02) {
            guard reader.calls.load(ordering: .relaxed) < 2 && reader.result.load(ordering: .relaxed) == -2 else { return true }
            let id = reader.thread.load(ordering: .acquiring)
            if id != 0 { XCTAssertEqual(pthread_kill(pthread_t(id), SIGUSR1), 0) }
            return false
        }
        var byte: UInt8 = 7
        XCTAssertEqual(write(writeEnd, &byte, 1), 1)
        XCTAssertEqual(reader.done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(reader.result.load(ordering: .relaxed), 1, "the read returned the byte, not a failure")
        XCTAssertGreaterThanOrEqual(reader.calls.load(ordering: .relaxed), 2, "the interrupted read was made again")
    }

    func testANonBlockingCallThatWouldBlockSaysSo() throws {
        let (readEnd, writeEnd) = try makePipe()
        let flags = try syscall(where: "fcntl") { fcntl(readEnd, F_GETFL) }
        try syscall(where: "fcntl") { fcntl(readEnd, F_SETFL, flags | O_NONBLOCK) }
        var byte: UInt8 = 0
        guard case .wouldBlock = nonBlockingSyscall(where: "read", { read(readEnd, &byte, 1) }) else {
            return XCTFail("an empty pipe read without blocking")
        }
        byte = 9
        XCTAssertEqual(write(writeEnd, &byte, 1), 1)
        byte = 0
        guard case .done(1) = nonBlockingSyscall(where: "read", { read(readEnd, &byte, 1) }) else {
            return XCTFail("the byte written was not read")
        }
        XCTAssertEqual(byte, 9)
        guard case .failed(let error) = nonBlockingSyscall(where: "read", { read(-1, &byte, 1) }) else {
            return XCTFail("a read of no descriptor did not fail")
        }
        XCTAssertEqual(error.errno, EBADF)
        XCTAssertEqual(error.call.description, "read")
    }

    func testCloseClosesOnceAndNamesItsFailure() throws {
        let fd = try syscall(where: "open") { open("/dev/null", O_RDONLY | O_CLOEXEC) }
        try closeDescriptor(fd)
        // Not `fd` again: another thread may have been given its number meanwhile.
        XCTAssertThrowsError(try closeDescriptor(-1)) { error in
            XCTAssertEqual((error as? SystemCallError)?.errno, EBADF)
            XCTAssertEqual((error as? SystemCallError)?.call.description, "close")
        }
    }
}
