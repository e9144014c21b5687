// Package fileblob is a blob.Store in a local directory, the embedded
// default.
//
// # Layout
//
//	<dir>/ab/cd/<hex>   the blob whose lowercase hex address is <hex>,
//	                    which starts with "abcd"
//	<dir>/tmp/          blobs being written
//
// Two levels of 256 directories keep every directory small (a million
// blobs leave ~16 files per leaf). Files are created 0600 and directories
// 0700: blobs are tenant data.
//
// # Durability
//
// Put writes the bytes to a new file in <dir>/tmp, fsyncs it, renames it to
// its final name and fsyncs the leaf directory (and any directory Put
// created, with its parent), so a blob is either absent or whole and
// durable when Put returns, even across a power cut. Concurrent Puts of one
// blob each write their own temp file; the renames replace identical bytes.
// Put of a blob already present with the right size rewrites nothing; it
// only syncs the file and its leaf directory, since the writer that
// created the file may not have synced them yet. A present file of the wrong size is replaced.
//
// PutDeferred (blob.Deferred) writes and renames the same way without
// the fsyncs, after asking the kernel to start writing the file back: the
// blob survives the death of the process when it returns, and a power cut
// once Sync has fsynced it and its leaf directory. Sync fsyncs every file
// deferred before it (8 at a time) and then each leaf directory once; a
// blob deleted meanwhile is skipped (docs/decisions/021).
//
// A writer that crashes leaves its temp file behind. Open removes temp
// files older than StaleTemp (one minute): a live writer finishes a chunk
// in far less, so a file that old belongs to a dead process. Several
// processes may share one directory.
//
// Delete does not unlink a blob's file: it moves it into tmp and empties
// it, and the Store's next puts write their blobs into such files
// (at most 4,096 kept): creating an inode on ext4 without a journal
// skips, one by one, every inode deleted in the last minutes, which made
// the inode allocation up to a third of a write's CPU on a store that
// collects garbage (docs/decisions/033). The emptied files are temp files
// like others: a crash leaves them to the next Open's clean-up.
//
// Delete removes the leaf and shard directories it leaves empty (rmdir
// only removes an empty directory). A Put whose rename finds its
// directory removed meanwhile creates it again and retries, so the two do
// not race, across processes too.
//
// List and ListIDs (blob.IDLister: the addresses alone, without a stat of
// every file) read the leaf directories eight at a time: a million blobs
// fill all 65,536 of them. On Linux a leaf is opened relative to its
// shard and read with getdents straight into a buffer, its addresses
// parsed from the records (no os.File or DirEntry per leaf or file).
//
// A missing blob's error is fs.ErrNotExist naming the blob by address,
// never by the file that would hold it.
//
// # Verification
//
// A whole-blob Get hashes what it read and fails with errdefs.ErrCorrupt
// when the disk returned different bytes; ranged Gets are not verified.
package fileblob
