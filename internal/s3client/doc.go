// Package s3client builds the aws-sdk-go-v2 S3 clients of forkspace's S3
// drivers (mount/s3mount, blob/s3blob) the one way they all need, and
// classifies the SDK's errors into the sentinels callers test for.
//
// A client from New:
//   - signs with Config.Credentials or, when nil, the environment
//     (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN);
//     anonymous when neither has an access key. Credentials live only in
//     the client held in memory (Credentials hides its secret from %v);
//   - signs for Config.Region, else AWS_REGION, AWS_DEFAULT_REGION, then
//     DefaultRegion;
//   - computes and validates checksums only when the S3 API requires them,
//     so servers without the newer flexible checksums (R2, MinIO,
//     versitygw, gofakes3) accept every request;
//   - retries what the SDK's standard retryer deems transient (500, 502,
//     503 SlowDown, throttling, connection errors and timeouts) with
//     jittered exponential backoff, up to Config.MaxAttempts attempts, with
//     no client-side retry quota (a burst of faults is not made worse by
//     failing fast).
//
// Classify maps an SDK error to fs.ErrNotExist, fs.ErrPermission,
// errdefs.ErrConflict or ErrUnreachable (no S3 answer at all), or nil.
package s3client
