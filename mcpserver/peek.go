package mcpserver

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// call is what peekCall finds of a JSON-RPC request.
type call struct {
	ID     []byte // the raw JSON of "id" (nil: none)
	Method string
	Tool   string // params.name of a tools/call
}

// maxKept bounds the length of a key or value peekCall keeps; longer ones
// are read past, not kept.
const maxKept = 256

var errSyntax = errors.New("not a JSON object")

// peekCall reads one JSON-RPC request object from r in constant memory and
// returns its id, method and params.name, however large the rest of it
// is (a tool argument of hundreds of megabytes is skipped, not held). It
// reads r to the end of the object. Malformed input yields what was found
// before it and an error.
func peekCall(r io.Reader) (call, error) {
	p := peeker{r: bufio.NewReader(r)}
	var c call
	err := p.object(func(key []byte) error {
		switch string(key) {
		case "id":
			v, err := p.scalar()
			if err == nil && len(v) > 0 && len(v) <= maxKept {
				c.ID = v
			}
			return err
		case "method":
			v, err := p.scalar()
			if len(v) >= 2 && v[0] == '"' {
				c.Method = string(v[1 : len(v)-1])
			}
			return err
		case "params":
			if b, err := p.peekByte(); err != nil || b != '{' {
				return p.skip()
			}
			return p.object(func(key []byte) error {
				if string(key) != "name" {
					return p.skip()
				}
				v, err := p.scalar()
				if len(v) >= 2 && v[0] == '"' {
					c.Tool = string(v[1 : len(v)-1])
				}
				return err
			})
		}
		return p.skip()
	})
	return c, err
}

type peeker struct{ r *bufio.Reader }

func (p *peeker) peekByte() (byte, error) {
	for {
		b, err := p.r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b, p.r.UnreadByte()
	}
}

func (p *peeker) next() (byte, error) {
	b, err := p.peekByte()
	if err == nil {
		_, err = p.r.ReadByte()
	}
	return b, err
}

// object reads an object, calling member for each key with the reader at
// its value; member must consume the value.
func (p *peeker) object(member func(key []byte) error) error {
	if b, err := p.next(); err != nil || b != '{' {
		return errSyntax
	}
	if b, err := p.peekByte(); err == nil && b == '}' {
		_, err = p.r.ReadByte()
		return err
	}
	for {
		key, err := p.str()
		if err != nil {
			return err
		}
		if b, err := p.next(); err != nil || b != ':' {
			return errSyntax
		}
		if err := member(key[1 : len(key)-1]); err != nil {
			return err
		}
		switch b, err := p.next(); {
		case err != nil:
			return err
		case b == '}':
			return nil
		case b != ',':
			return errSyntax
		}
	}
}

// str reads a string, keeping at most maxKept bytes of it (quotes
// included when it fits; a longer string is returned as `""`).
func (p *peeker) str() ([]byte, error) {
	if b, err := p.next(); err != nil || b != '"' {
		return nil, errSyntax
	}
	kept := []byte{'"'}
	long := false
	for {
		b, err := p.r.ReadByte()
		if err != nil {
			return nil, err
		}
		if b == '\\' {
			e, err := p.r.ReadByte()
			if err != nil {
				return nil, err
			}
			if len(kept) < maxKept {
				kept = append(kept, b, e)
			} else {
				long = true
			}
			continue
		}
		if b == '"' {
			if long {
				return []byte(`""`), nil
			}
			return append(kept, '"'), nil
		}
		if len(kept) < maxKept {
			kept = append(kept, b)
		} else {
			long = true
		}
	}
}

// scalar reads a value: a string or a literal (number, true, false,
// null) as its raw JSON, or skips an array or object and returns nil.
func (p *peeker) scalar() ([]byte, error) {
	b, err := p.peekByte()
	if err != nil {
		return nil, err
	}
	switch b {
	case '"':
		return p.str()
	case '{', '[':
		return nil, p.skip()
	}
	var lit []byte
	for {
		b, err := p.r.ReadByte()
		if err != nil {
			return nil, err
		}
		if bytes.IndexByte([]byte(",}] \t\r\n"), b) >= 0 {
			return lit, p.r.UnreadByte()
		}
		if len(lit) >= maxKept {
			return nil, errSyntax
		}
		lit = append(lit, b)
	}
}

// skip reads past one value of any kind and size.
func (p *peeker) skip() error {
	b, err := p.peekByte()
	if err != nil {
		return err
	}
	if b != '{' && b != '[' {
		_, err := p.scalar()
		return err
	}
	depth := 0
	for {
		b, err := p.r.ReadByte()
		if err != nil {
			return err
		}
		switch b {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return nil
			}
		case '"':
			if err := p.r.UnreadByte(); err != nil {
				return err
			}
			if _, err := p.str(); err != nil {
				return err
			}
		}
	}
}
