package pgmeta

// OwnerLockKey is ownerLockKey, for tests that hold the lock as another
// process would.
const OwnerLockKey = ownerLockKey
