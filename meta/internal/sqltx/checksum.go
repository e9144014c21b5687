package sqltx

import "hash/crc32"

// castagnoli is the CRC-32C table (SSE 4.2 and ARMv8 compute it in
// hardware, at several GB/s).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// InlineSum is the checksum stored beside an inline body (column crc): the
// CRC-32C of its bytes.
func InlineSum(data []byte) int64 { return int64(crc32.Checksum(data, castagnoli)) }

// InlineChecked reports whether data is the body whose stored checksum is
// crc; stored is false for a row written before checksums (crc NULL), which
// readers verify against its hash instead (docs/decisions/034).
func InlineChecked(data []byte, crc int64, stored bool) bool {
	return stored && InlineSum(data) == crc
}
