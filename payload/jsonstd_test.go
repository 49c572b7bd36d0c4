package payload

// The encoding/json-based Encode and Decode that jsonencode.go and
// jsondecode.go replaced, kept as the reference the fuzz targets compare
// them with (stdEncode, stdDecode).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// stdEncode returns the JSON form of v. Lists become arrays, maps objects (a
// map[any]any's keys are written as strings: 1 → "1", true → "true"), []byte
// a string of its bytes (invalid UTF-8 is replaced, as encoding/json does).
// NaN and infinities are refused, as JSON has no spelling for them.
func stdEncode(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := stdEncodeValue(&buf, v, "value", 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func stdEncodeValue(buf *bytes.Buffer, v any, path string, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%s: nested deeper than %d (a cycle?)", path, maxDepth)
	}
	switch x := v.(type) {
	case nil, null:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(x))
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s: %v cannot be encoded as JSON", path, x)
		}
		b, _ := json.Marshal(x)
		buf.Write(b)
	case string:
		b, _ := json.Marshal(x)
		buf.Write(b)
	case []byte:
		b, _ := json.Marshal(string(x))
		buf.Write(b)
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := stdEncodeValue(buf, e, path+"["+strconv.Itoa(i+1)+"]", depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case map[string]any:
		return stdEncodeObject(buf, len(x), func(yield func(string, any) bool) {
			for k, e := range x {
				if !yield(k, e) {
					return
				}
			}
		}, path, depth)
	case map[any]any:
		if err := stdCheckObjectKeys(x, path); err != nil {
			return err
		}
		return stdEncodeObject(buf, len(x), func(yield func(string, any) bool) {
			for k, e := range x {
				if !yield(fmt.Sprint(k), e) {
					return
				}
			}
		}, path, depth)
	default:
		return fmt.Errorf("%s: %T cannot be encoded as JSON", path, v)
	}
	return nil
}

// stdCheckObjectKeys checks that the keys of m can be written as the keys of
// one object: each a valid key, and no two written as the same string
// (1 and "1", true and "true"), which would make a duplicate key whose
// value a reader picks at will.
func stdCheckObjectKeys(m map[any]any, path string) error {
	seen := make(map[string]any, len(m))
	for k := range m {
		if err := checkKey(k, path); err != nil {
			return err
		}
		s := fmt.Sprint(k)
		if other, dup := seen[s]; dup {
			a, b := stdKeyText(k), stdKeyText(other)
			if a > b {
				a, b = b, a // the same message whatever the map's order
			}
			return fmt.Errorf("%s: keys %s and %s would both be written as the object key %q", path, a, b, s)
		}
		seen[s] = k
	}
	return nil
}

// keyText is k as a Lua programmer would write it: "1" for a string, 1
// for a number.
func stdKeyText(k any) string {
	if s, ok := k.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(k)
}

// stdEncodeObject writes an object with sorted keys, so output is stable.
func stdEncodeObject(buf *bytes.Buffer, n int, each func(func(string, any) bool), path string, depth int) error {
	keys := make([]string, 0, n)
	vals := make(map[string]any, n)
	each(func(k string, v any) bool {
		keys = append(keys, k)
		vals[k] = v
		return true
	})
	slices.Sort(keys)
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		if err := stdEncodeValue(buf, vals[k], JoinKey(path, k), depth+1); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

// stdDecode parses JSON into a Value: objects become map[string]any, arrays
// []any, numbers int64 when they are written as integers that fit (but
// -0) and float64 otherwise, null nil.
func stdDecode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("decode JSON: %w%s", err, stdPosition(data, err, dec.InputOffset()))
	}
	if rest := data[dec.InputOffset():]; len(bytes.TrimLeft(rest, jsonSpace)) > 0 {
		// dec.More would miss a stray ']' or '}' after the value
		return nil, fmt.Errorf("decode JSON: data after the first value%s", stdPosition(data, nil, dec.InputOffset()))
	}
	return stdFromJSON(raw), nil
}

// position is " at line L, column C (byte B)" of a decoding error: the byte a
// syntax error names, the end of the input for an unexpected end, else
// the first byte after what was decoded (skipping spaces).
func stdPosition(data []byte, err error, offset int64) string {
	idx := int(offset)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		idx = int(se.Offset) - 1 // Offset is past the offending byte
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		idx = len(data)
	default:
		for idx < len(data) && strings.IndexByte(jsonSpace, data[idx]) >= 0 {
			idx++
		}
	}
	idx = max(0, min(idx, len(data)))
	line := bytes.Count(data[:idx], []byte("\n")) + 1
	col := idx - bytes.LastIndexByte(data[:idx], '\n')
	return fmt.Sprintf(" at line %d, column %d (byte %d)", line, col, idx+1)
}

func stdFromJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		// -0 stays a float: Lua's -0 (tonumber("-0")) round-trips
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil && (i != 0 || x[0] != '-') {
			return i
		}
		f, _ := strconv.ParseFloat(string(x), 64)
		return f
	case []any:
		for i, e := range x {
			x[i] = stdFromJSON(e)
		}
		return x
	case map[string]any:
		for k, e := range x {
			x[k] = stdFromJSON(e)
		}
		return x
	default:
		return v // nil, bool, string
	}
}
