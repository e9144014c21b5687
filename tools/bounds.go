package tools

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// bound is the range of one numeric argument, from its field's
// `bounds:"MIN,MAX"` tag. Every integer argument of a tool must have one:
// add panics otherwise, so no argument reaches a tool unbounded (a huge
// timeout once overflowed into "timed out after 2ms").
type bound struct {
	index    int
	name     string
	min, max int64
}

// boundsOf reads the bounds of the integer fields of struct type t.
func boundsOf(t reflect.Type) []bound {
	var bs []bound
	for i := range t.NumField() {
		f := t.Field(i)
		switch f.Type.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		default:
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		lo, hi, ok := strings.Cut(f.Tag.Get("bounds"), ",")
		b := bound{index: i, name: name}
		var err1, err2 error
		b.min, err1 = strconv.ParseInt(lo, 10, 64)
		b.max, err2 = strconv.ParseInt(hi, 10, 64)
		if !ok || err1 != nil || err2 != nil || b.min > b.max {
			panic(fmt.Sprintf("tools: argument %s of %s needs a bounds:\"MIN,MAX\" tag", name, t))
		}
		bs = append(bs, b)
	}
	return bs
}

// document adds the bounds to the schema's properties.
func document(s *jsonschema.Schema, bs []bound) {
	for _, b := range bs {
		p := s.Properties[b.name]
		if p == nil {
			continue
		}
		lo, hi := float64(b.min), float64(b.max)
		p.Minimum, p.Maximum = &lo, &hi
	}
}

// check rejects a decoded argument outside its bounds.
func check(v reflect.Value, bs []bound) error {
	for _, b := range bs {
		if n := v.Field(b.index).Int(); n < b.min || n > b.max {
			return argError("%s must be between %d and %d (got %d)", b.name, b.min, b.max, n)
		}
	}
	return nil
}

// plain replaces, throughout s, a union of a type with "null" (what a Go
// slice, map or pointer derives to) by the type alone: some clients (the
// MCP Inspector among them) reject type arrays, and a tool argument left
// out is already how a model says "none".
func plain(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if nonNull := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" }); len(s.Types) > 0 && len(nonNull) == 1 {
		s.Type, s.Types = nonNull[0], nil
	}
	for _, p := range s.Properties {
		plain(p)
	}
	for _, d := range s.Defs {
		plain(d)
	}
	plain(s.Items)
	plain(s.AdditionalProperties)
}
