// Package payload is the value model for everything that crosses a process
// boundary in luarun: process inputs, results and messages.
//
// A Value is one of:
//
//	nil
//	bool
//	int64              (integers stay integers)
//	float64
//	string             (any bytes; Lua strings map here)
//	[]byte
//	[]any              a list of Values
//	map[string]any     a map with string keys
//	map[any]any        a map whose keys are bool, int64, float64 or string
//	Null               JSON's null where nil would be a hole (json.null in Lua)
//
// Values are plain Go data: a sender builds one, the receiver owns what it
// gets. Check rejects anything else with the path of the bad value, and
// Encode/Decode convert to and from JSON.
package payload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Null is JSON's null as a value of its own: an element of a list or a
// map that is there and null, where nil would be a hole (a Lua list
// cannot hold nil). Lua's json.null crosses a process boundary as Null
// and arrives as json.null; Encode writes it as null.
var Null = null{}

type null struct{}

func (null) String() string { return "null" }

// Payloads is an argument or result list.
type Payloads []any

// Check reports whether v is a valid Value. The error names the path of the
// first bad value, for example `msg.items[3].cb: func() cannot be sent`.
// Cycles cannot occur in the allowed types except through a list or map that
// contains itself, which Check refuses.
func Check(v any) error {
	return check(v, "value", map[uintptr]bool{})
}

// CheckAll is Check for every element of a list, naming them arg1, arg2...
func CheckAll(ps Payloads) error {
	for i, v := range ps {
		if err := check(v, "arg"+strconv.Itoa(i+1), map[uintptr]bool{}); err != nil {
			return err
		}
	}
	return nil
}

func check(v any, path string, seen map[uintptr]bool) error {
	switch x := v.(type) {
	case nil, bool, int64, float64, string, []byte, null:
		return nil
	case []any:
		if len(x) == 0 {
			return nil
		}
		return visit(ptrOf(&x[0]), path, seen, func() error {
			for i, e := range x {
				if err := check(e, path+"["+strconv.Itoa(i+1)+"]", seen); err != nil {
					return err
				}
			}
			return nil
		})
	case map[string]any:
		return visit(mapID(x), path, seen, func() error {
			for k, e := range x {
				if err := check(e, JoinKey(path, k), seen); err != nil {
					return err
				}
			}
			return nil
		})
	case map[any]any:
		return visit(mapID(x), path, seen, func() error {
			for k, e := range x {
				if err := checkKey(k, path); err != nil {
					return err
				}
				if err := check(e, JoinKey(path, k), seen); err != nil {
					return err
				}
			}
			return nil
		})
	default:
		return fmt.Errorf("%s: %T cannot be sent", path, v)
	}
}

// visit runs body for the container with identity id, refusing a cycle:
// a container that is already being visited on the current path.
func visit(id uintptr, path string, seen map[uintptr]bool, body func() error) error {
	if seen[id] {
		return fmt.Errorf("%s: cycle", path)
	}
	seen[id] = true
	defer delete(seen, id)
	return body()
}

func checkKey(k any, path string) error {
	switch x := k.(type) {
	case bool, int64, string:
		return nil
	case float64:
		if math.IsNaN(x) {
			return fmt.Errorf("%s: NaN cannot be a key", path)
		}
		return nil
	default:
		return fmt.Errorf("%s: key of type %T cannot be sent", path, k)
	}
}

// JoinKey extends the path of a value to one of its fields, the way a Lua
// programmer would write it: a.b for identifier keys, a["x y"] or a[3]
// otherwise. Error messages about values use it.
func JoinKey(path string, k any) string {
	if s, ok := k.(string); ok {
		if IsIdent(s) {
			return path + "." + s
		}
		return path + "[" + strconv.Quote(s) + "]"
	}
	return path + "[" + fmt.Sprint(k) + "]"
}

// IsIdent reports whether s is a Lua identifier (letters, digits and _,
// not starting with a digit).
func IsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return !strings.ContainsAny(s, " ")
}
