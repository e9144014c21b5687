package chunk

import (
	"errors"
	"fmt"
	"io"
)

// Cut returns the length of the first chunk of data. data must be the rest
// of the input or at least MaxSize bytes long; the result is then the same
// however the input is buffered. Cut returns len(data) when data is no
// longer than MinSize and never more than MaxSize. p must be valid
// (Validate); Cut does not allocate and is safe for concurrent use.
func (p Params) Cut(data []byte) int {
	if len(data) <= p.MinSize {
		return len(data)
	}
	n := min(len(data), p.MaxSize)
	norm := max(min(n, p.AvgSize), p.MinSize)
	small, large := p.masks()
	i, fp := scan(data[p.MinSize:norm], 0, small)
	if i >= 0 {
		return p.MinSize + i + 1
	}
	if i, _ = scan(data[norm:n], fp, large); i >= 0 {
		return norm + i + 1
	}
	return n
}

// scan rolls the hash fp over data, fp = fp<<1 + gear[b] per byte, and
// returns the index of the first byte after which fp&mask is zero, or -1
// and the final fp. It is the byte-at-a-time loop unrolled by four: the
// hash after each of four bytes is fp shifted plus a sum of their gear
// values that does not depend on fp, so the four are computed side by
// side and the loop-carried chain is one shift and one add per four bytes
// instead of per byte.
func scan(data []byte, fp, mask uint64) (int, uint64) {
	g := &gear
	i := 0
	for ; i+4 <= len(data); i += 4 {
		b := data[i : i+4 : i+4]
		s1 := g[b[0]]
		s2 := s1<<1 + g[b[1]]
		s3 := s2<<1 + g[b[2]]
		s4 := s3<<1 + g[b[3]]
		f1, f2, f3, f4 := fp<<1+s1, fp<<2+s2, fp<<3+s3, fp<<4+s4
		if (f1&mask == 0) || (f2&mask == 0) || (f3&mask == 0) || (f4&mask == 0) {
			switch {
			case f1&mask == 0:
				return i, f1
			case f2&mask == 0:
				return i + 1, f2
			case f3&mask == 0:
				return i + 2, f3
			}
			return i + 3, f4
		}
		fp = f4
	}
	for ; i < len(data); i++ {
		fp = fp<<1 + g[data[i]]
		if fp&mask == 0 {
			return i, fp
		}
	}
	return -1, fp
}

// Next is Cut for a prefix of the input: it returns the length of the
// first chunk and true when data decides it, that is when atEOF says data
// is the rest of the input, when data holds MaxSize bytes, or when a
// content-defined boundary falls before its last byte. Otherwise it
// returns 0 and false: read more and call again. A true result equals what
// Cut returns for the whole input.
func (p Params) Next(data []byte, atEOF bool) (int, bool) {
	n := p.Cut(data)
	if atEOF || len(data) >= p.MaxSize || n < len(data) {
		return n, true
	}
	return 0, false
}

// Split reads r to the end and calls fn with each chunk in order. data is
// valid only during fn. An error from fn stops Split and is returned; an
// error from r is returned wrapped. Empty input yields no chunks. Invalid p
// fails with fs.ErrInvalid before reading.
func Split(r io.Reader, p Params, fn func(data []byte) error) error {
	if err := p.Validate(); err != nil {
		return err
	}
	buf := make([]byte, 2*p.MaxSize)
	start, end, eof := 0, 0, false
	for {
		if !eof && end-start < p.MaxSize {
			end = copy(buf, buf[start:end])
			start = 0
			n, err := io.ReadFull(r, buf[end:])
			end += n
			switch {
			case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
				eof = true
			case err != nil:
				return fmt.Errorf("split: read: %w", err)
			}
		}
		if start == end {
			return nil
		}
		n := p.Cut(buf[start:end])
		if err := fn(buf[start : start+n]); err != nil {
			return err
		}
		start += n
	}
}
