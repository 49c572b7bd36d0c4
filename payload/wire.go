package payload

// The wire form of a value, for carrying messages between luarun nodes.
//
// JSON loses what a message must keep (an integer from a float that is
// integral, a map's non-string keys, Null from a hole, bytes from text), so
// a node sends values in a tagged binary form instead: one tag byte per
// value, then its contents —
//
//	nil, Null, false, true     the tag alone
//	int64                      a zigzag varint
//	float64                    8 bytes, IEEE 754, little-endian
//	string, []byte             a uvarint length, the bytes
//	[]any                      a uvarint count, the elements
//	map[string]any             a uvarint count, then each key (length, bytes) and value
//	map[any]any                a uvarint count, then each key and value as values
//
// Unmarshal checks every length against what is left, so a malformed or
// hostile message is an error, never a panic; a list or map grows as its
// elements are read (a count is only a claim: deep nesting of large
// claimed counts must not make each level allocate the whole message).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

const (
	tagNil byte = iota
	tagNull
	tagFalse
	tagTrue
	tagInt
	tagFloat
	tagString
	tagBytes
	tagList
	tagMap
	tagAnyMap
)

// AppendWire appends the wire form of v, a valid payload value (Check), to
// buf.
func AppendWire(buf []byte, v any) ([]byte, error) {
	return appendWire(buf, v, "value", 0)
}

func appendWire(buf []byte, v any, path string, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%s: nested deeper than %d (a cycle?)", path, maxDepth)
	}
	var err error
	switch x := v.(type) {
	case nil:
		buf = append(buf, tagNil)
	case null:
		buf = append(buf, tagNull)
	case bool:
		buf = append(buf, tagFalse)
		if x {
			buf[len(buf)-1] = tagTrue
		}
	case int64:
		buf = binary.AppendVarint(append(buf, tagInt), x)
	case float64:
		buf = binary.LittleEndian.AppendUint64(append(buf, tagFloat), math.Float64bits(x))
	case string:
		buf = append(binary.AppendUvarint(append(buf, tagString), uint64(len(x))), x...)
	case []byte:
		buf = append(binary.AppendUvarint(append(buf, tagBytes), uint64(len(x))), x...)
	case []any:
		buf = binary.AppendUvarint(append(buf, tagList), uint64(len(x)))
		for i, e := range x {
			if buf, err = appendWire(buf, e, path+"["+strconv.Itoa(i+1)+"]", depth+1); err != nil {
				return nil, err
			}
		}
	case map[string]any:
		buf = binary.AppendUvarint(append(buf, tagMap), uint64(len(x)))
		for k, e := range x {
			buf = append(binary.AppendUvarint(buf, uint64(len(k))), k...)
			if buf, err = appendWire(buf, e, JoinKey(path, k), depth+1); err != nil {
				return nil, err
			}
		}
	case map[any]any:
		buf = binary.AppendUvarint(append(buf, tagAnyMap), uint64(len(x)))
		for k, e := range x {
			if err := checkKey(k, path); err != nil {
				return nil, err
			}
			if buf, err = appendWire(buf, k, path, depth+1); err != nil {
				return nil, err
			}
			if buf, err = appendWire(buf, e, JoinKey(path, k), depth+1); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("%s: %T cannot be sent", path, v)
	}
	return buf, nil
}

// errShort is a wire form that ends inside a value.
var errShort = errors.New("wire: truncated value")

// UnmarshalWire reads one value in wire form from data and returns it with
// what follows it.
func UnmarshalWire(data []byte) (v any, rest []byte, err error) {
	r := wireReader{data: data}
	v = r.value(0)
	return v, r.data, r.err
}

// wireReader reads values from data, keeping the first error.
type wireReader struct {
	data []byte
	err  error
}

func (r *wireReader) fail(err error) any {
	if r.err == nil {
		r.err = err
	}
	r.data = nil
	return nil
}

// count reads a uvarint length or count; each counted item takes at least
// one byte, so a count past what is left is refused before anything is
// made for it.
func (r *wireReader) count() int {
	n, k := binary.Uvarint(r.data)
	if k <= 0 || n > uint64(len(r.data)-k) {
		r.fail(errShort)
		return 0
	}
	r.data = r.data[k:]
	return int(n)
}

func (r *wireReader) bytes() []byte {
	n := r.count()
	if r.err != nil {
		return nil
	}
	b := r.data[:n:n]
	r.data = r.data[n:]
	return b
}

func (r *wireReader) value(depth int) any {
	if depth > maxDepth {
		return r.fail(fmt.Errorf("wire: nested deeper than %d", maxDepth))
	}
	if len(r.data) == 0 {
		return r.fail(errShort)
	}
	tag := r.data[0]
	r.data = r.data[1:]
	switch tag {
	case tagNil:
		return nil
	case tagNull:
		return Null
	case tagFalse, tagTrue:
		return tag == tagTrue
	case tagInt:
		x, k := binary.Varint(r.data)
		if k <= 0 {
			return r.fail(errShort)
		}
		r.data = r.data[k:]
		return x
	case tagFloat:
		if len(r.data) < 8 {
			return r.fail(errShort)
		}
		x := math.Float64frombits(binary.LittleEndian.Uint64(r.data))
		r.data = r.data[8:]
		return x
	case tagString:
		return boxString(r.bytes())
	case tagBytes:
		return append([]byte{}, r.bytes()...)
	case tagList:
		return r.list(depth)
	case tagMap, tagAnyMap:
		return r.dict(tag, depth)
	}
	return r.fail(fmt.Errorf("wire: unknown tag %d", tag))
}

// wireInitialCap bounds what a count makes before its elements are read.
const wireInitialCap = 16

func (r *wireReader) list(depth int) any {
	n := r.count()
	list := make([]any, 0, min(n, wireInitialCap))
	for i := 0; i < n && r.err == nil; i++ {
		list = append(list, r.value(depth+1))
	}
	if r.err != nil {
		return nil
	}
	return list
}

func (r *wireReader) dict(tag byte, depth int) any {
	n := r.count()
	if tag == tagMap {
		m := make(map[string]any, min(n, wireInitialCap))
		for i := 0; i < n && r.err == nil; i++ {
			k := string(r.bytes())
			m[k] = r.value(depth + 1)
		}
		if r.err != nil {
			return nil
		}
		return m
	}
	m := make(map[any]any, min(n, wireInitialCap))
	for i := 0; i < n && r.err == nil; i++ {
		k := r.value(depth + 1)
		if err := checkKey(k, "wire"); err != nil {
			return r.fail(err) // keeps the first error, if a read failed
		}
		m[k] = r.value(depth + 1)
	}
	if r.err != nil {
		return nil
	}
	return m
}
