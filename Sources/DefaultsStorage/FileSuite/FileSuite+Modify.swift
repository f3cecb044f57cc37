import DefaultsPropertyList

extension FileSuite {
    /// Reads the value of `key`, lets `body` change it, and writes the result, holding the
    /// suite's cross-process lock from the read to the write, so that no other process (nor
    /// another modify in this one) writes in between.
    ///
    /// The value is read from the file as other processes left it. The write happens before this
    /// returns; if it fails (an unwritable directory, a full disk, a lock that cannot be taken),
    /// the change is kept in memory and written later, and the problem is reported through
    /// ``problems``, ``onProblem`` and ``Defaults/logger``: the read and the write are then as
    /// atomic as in memory only.
    ///
    /// `body` may read and write the suite. It runs holding the suite's locks: a flush, reload or
    /// modify of this suite reached from it on the same thread (an observer of a key it sets, a
    /// problem handler) does not wait for them, and its changes are written with the body's.
    /// When `body` throws, nothing is stored.
    public func modify<Result, Failure: Error>(
        forKey key: String, _ body: (inout Any?) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var outcome: Swift.Result<Result, Failure>?
        synchronize { held in
            var value = object(forKey: key)
            do throws(Failure) {
                outcome = .success(try body(&value))
            } catch {
                outcome = .failure(error)
                return
            }
            switch SuiteWrite.convert(value, forKey: key, suite: name, fileURL: fileURL) {
            case .success(let value):
                editHoldingLocks(.set(key, value), into: &held, isPersistedByCaller: true)
            case .failure(let problem):
                held.report(problem)
            }
        }
        if let outcome {
            return try outcome.get()
        }
        // The lock could not be taken (reported): change the value in memory all the same, as a
        // plain write would, to be written when the file can be.
        var value = object(forKey: key)
        let result = try body(&value)
        set(value, forKey: key)
        return result
    }

}
