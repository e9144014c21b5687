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
	var fp uint64
	for i, b := range data[p.MinSize:norm] {
		fp = fp<<1 + gear[b]
		if fp&small == 0 {
			return p.MinSize + i + 1
		}
	}
	for i, b := range data[norm:n] {
		fp = fp<<1 + gear[b]
		if fp&large == 0 {
			return norm + i + 1
		}
	}
	return n
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
