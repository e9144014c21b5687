package transfer

import (
	"archive/tar"
	"bytes"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// tarBlock is the size of a tar header block and the unit bodies are
// padded to.
const tarBlock = 512

// zeros pads bodies and ends an archive (two zero blocks).
var zeros [2 * tarBlock]byte

// Limits of the octal fields of a ustar header (with their NUL): 7 digits
// for ids and 11 for sizes and times.
const (
	maxOctal7  = 1<<21 - 1
	maxOctal11 = 1<<33 - 1
)

// tarHeaders encodes entry headers exactly as archive/tar's Writer does
// for a tar.Header with Format tar.FormatPAX (TestTarHeadersMatch), without
// its per-entry cost (a map of records and formatting the reasons it
// rejects other formats, times included, with fmt): the entries an export
// writes are encoded here, anything unusual by archive/tar itself.
type tarHeaders struct {
	out  []byte   // the header blocks of the last entry
	recs []byte   // the PAX records of the last entry
	keys []string // its records' keys, sorted
	val  []byte   // a time being formatted
}

// encode returns the header blocks of h (valid until the next call): a
// PAX extended header when h needs records, then the ustar header. h has
// Format tar.FormatPAX and no Uname, Gname, devices or ChangeTime, and its
// PAXRecords are SCHILY.xattr records.
func (t *tarHeaders) encode(h *tar.Header) ([]byte, error) {
	if !t.plain(h) {
		return t.viaArchiveTar(h)
	}
	t.out = t.out[:0]
	if recs := t.records(h); len(recs) > 0 {
		t.out = appendRawFile(t.out, paxHeaderName(h.Name), recs)
	}
	t.out = appendUstar(t.out, h)
	return t.out, nil
}

// plain reports whether h is an entry encode writes itself: names and a
// link target of ASCII that fit their fields, ids, size and times that fit
// theirs (times from 1970 on), xattr names that make valid records.
func (t *tarHeaders) plain(h *tar.Header) bool {
	switch {
	case !shortASCII(h.Name) || !shortASCII(h.Linkname):
		return false
	case h.Typeflag == tar.TypeReg && strings.HasSuffix(h.Name, "/"):
		return false // archive/tar refuses it
	case h.Uid < 0 || h.Uid > maxOctal7 || h.Gid < 0 || h.Gid > maxOctal7:
		return false
	case h.Size < 0 || h.Size > maxOctal11 || h.Mode < 0 || h.Mode > maxOctal7:
		return false
	case !plainTime(h.ModTime) || !plainTime(h.AccessTime):
		return false
	}
	for k := range h.PAXRecords {
		name, ok := strings.CutPrefix(k, xattrPrefix)
		if !ok || name == "" || strings.ContainsAny(name, "=\x00") {
			return false
		}
	}
	return true
}

// shortASCII reports whether s fits a 100-byte name field as is: ASCII
// without NUL.
func shortASCII(s string) bool {
	if len(s) > 100 {
		return false
	}
	for i := range len(s) {
		if s[i] == 0 || s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// plainTime reports whether ts is unset or a time from 1970 whose seconds
// fit an 11-digit octal field.
func plainTime(ts time.Time) bool {
	return ts.IsZero() || ts.Unix() >= 0 && ts.Unix() <= maxOctal11
}

// records returns the PAX records of plain h, encoded and in key order:
// its extended attributes, its access time when set and its modification
// time when it has a fraction of a second (nil when none).
func (t *tarHeaders) records(h *tar.Header) []byte {
	t.keys = t.keys[:0]
	for k := range h.PAXRecords {
		t.keys = append(t.keys, k)
	}
	slices.Sort(t.keys) // "SCHILY.…" sorts before "atime" and "mtime"
	t.recs = t.recs[:0]
	for _, k := range t.keys {
		t.recs = appendPAXRecord(t.recs, k, h.PAXRecords[k])
	}
	if !h.AccessTime.IsZero() {
		t.val = appendPAXTime(t.val[:0], h.AccessTime)
		t.recs = appendPAXRecord(t.recs, "atime", t.val)
	}
	if h.ModTime.Nanosecond() != 0 {
		t.val = appendPAXTime(t.val[:0], h.ModTime)
		t.recs = appendPAXRecord(t.recs, "mtime", t.val)
	}
	return t.recs
}

// appendPAXRecord appends the record "<len> key=value\n", whose length
// counts its own digits.
func appendPAXRecord[V string | []byte](dst []byte, k string, v V) []byte {
	size := len(k) + len(v) + 3 // ' ', '=' and '\n'
	size += decimalLen(size)
	if n := decimalLen(size) + len(k) + len(v) + 3; n != size {
		size = n // counting the digits added one
	}
	dst = strconv.AppendInt(dst, int64(size), 10)
	dst = append(dst, ' ')
	dst = append(dst, k...)
	dst = append(dst, '=')
	dst = append(dst, v...)
	return append(dst, '\n')
}

// decimalLen is the number of decimal digits of n ≥ 0.
func decimalLen(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// appendPAXTime appends a time from 1970 on as seconds with the
// fraction's trailing zeros dropped.
func appendPAXTime(dst []byte, ts time.Time) []byte {
	dst = strconv.AppendInt(dst, ts.Unix(), 10)
	if ts.Nanosecond() == 0 {
		return dst
	}
	dst = append(dst, '.')
	dst = strconv.AppendInt(dst, int64(1e9+ts.Nanosecond()), 10)
	frac := dst[len(dst)-9:]      // nine digits after the leading 1
	copy(dst[len(dst)-10:], frac) // drop the 1
	dst = dst[:len(dst)-1]
	return bytes.TrimRight(dst, "0")
}

// paxHeaderName names the extended header of the entry name as
// archive/tar does: "PaxHeaders.0" before its last element, in at most
// 100 bytes.
func paxHeaderName(name string) string {
	dir, file := path.Split(name)
	p := path.Join(dir, "PaxHeaders.0", file)
	if len(p) > 100 {
		p = p[:100]
	}
	return strings.TrimRight(p, "/")
}

// appendRawFile appends an extended header entry named name holding
// data, padded to a block.
func appendRawFile(dst []byte, name string, data []byte) []byte {
	dst, blk := appendBlock(dst)
	copy(blk[0:100], name)
	formatOctal(blk[100:108], 0)
	formatOctal(blk[108:116], 0)
	formatOctal(blk[116:124], 0)
	formatOctal(blk[124:136], int64(len(data)))
	formatOctal(blk[136:148], 0)
	blk[156] = tar.TypeXHeader
	finishBlock(blk)
	dst = append(dst, data...)
	return append(dst, zeros[:padding(int64(len(data)))]...)
}

// appendUstar appends the ustar header block of plain h.
func appendUstar(dst []byte, h *tar.Header) []byte {
	dst, blk := appendBlock(dst)
	copy(blk[0:100], h.Name)
	formatOctal(blk[100:108], h.Mode)
	formatOctal(blk[108:116], int64(h.Uid))
	formatOctal(blk[116:124], int64(h.Gid))
	formatOctal(blk[124:136], h.Size)
	mtime := int64(0)
	if !h.ModTime.IsZero() {
		mtime = h.ModTime.Unix()
	}
	formatOctal(blk[136:148], mtime)
	blk[156] = h.Typeflag
	copy(blk[157:257], h.Linkname)
	formatOctal(blk[329:337], 0) // device numbers
	formatOctal(blk[337:345], 0)
	finishBlock(blk)
	return dst
}

// appendBlock appends a zeroed header block and returns it.
func appendBlock(dst []byte) ([]byte, []byte) {
	n := len(dst)
	dst = append(dst, make([]byte, tarBlock)...)
	return dst, dst[n:]
}

// finishBlock sets the ustar magic and version and the checksum of blk.
func finishBlock(blk []byte) {
	copy(blk[257:265], "ustar\x0000")
	copy(blk[148:156], "        ") // counted as spaces
	sum := int64(0)
	for _, c := range blk {
		sum += int64(c)
	}
	formatOctal(blk[148:155], sum)
	blk[155] = ' '
}

// formatOctal writes x (which fits) in octal, zero-padded, NUL-terminated.
func formatOctal(field []byte, x int64) {
	var digits [24]byte
	s := strconv.AppendInt(digits[:0], x, 8)
	n := len(field) - 1 - len(s)
	for i := range n {
		field[i] = '0'
	}
	copy(field[n:], s)
	field[len(field)-1] = 0
}

// padding is how many zero bytes end a body of n bytes on a block.
func padding(n int64) int64 { return -n & (tarBlock - 1) }

// viaArchiveTar encodes h with archive/tar, for what encode does not
// write itself.
func (t *tarHeaders) viaArchiveTar(h *tar.Header) ([]byte, error) {
	var buf bytes.Buffer
	if err := tar.NewWriter(&buf).WriteHeader(h); err != nil {
		return nil, err
	}
	t.out = append(t.out[:0], buf.Bytes()...)
	return t.out, nil
}
