// Package bench holds benchmark scripts: engine.sh runs the benchmarks
// behind every goal of issue 9 (engine speed) and prints each figure
// beside its goal and the limit measured in the same run; the others
// compare forkspace with other tools side by side (fork-vs-cp.sh;
// import-vs-cp.sh: import against cp -a
// and export against tar; doors.sh: the S3 door with rclone
// against rclone's local backend), the memory of a FUSE daemon
// (fuse-memory.sh) and of an idle server against the store's size
// (serve-memory.sh), the SDKs' call latency against raw HTTP
// (python-sdk.py, typescript-sdk.mjs) and the generators they use
// (gentree) and share (lib.sh). The Go benchmarks of each package live beside the package;
// results are collected in docs/benchmarks.md.
package bench
