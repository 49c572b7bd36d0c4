package commands

// Reading a call's arguments the Lua way. A payload holds what a script
// passed: nil, bool, int64 or float64 (numbers), string or []byte, and
// tables ([]any for a list or {}, map[string]any, map[any]any). These
// helpers check and convert them, and their errors name values as Lua
// does ("string expected, got table"), never as Go types.
//
// Wherever a string is expected a number is accepted too, written as
// Lua's tostring writes it (5 → "5", 1.5 → "1.5"), as Lua's own string
// functions do. Paths and command arguments are checked for NUL bytes,
// which the system cannot take ("argument 1 contains a NUL byte" rather
// than the kernel's "invalid argument").

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/luarun/luarun/optcheck"
)

// luaType names a payload value as Lua's type() would.
func luaType(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case bool:
		return "boolean"
	case int64, float64:
		return "number"
	case string, []byte:
		return "string"
	case []any, map[string]any, map[any]any:
		return "table"
	}
	return "userdata"
}

// typeName names Args[i] for an error: its Lua type, or "no value".
func typeName(args []any, i int) string {
	if i >= len(args) {
		return "no value"
	}
	return luaType(args[i])
}

// scalarString reads a string, or a number as Lua's tostring writes it.
func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return formatNumber(x), true
	}
	return "", false
}

// formatNumber writes a float as Lua's tostring does ("%.14g").
func formatNumber(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return strconv.FormatFloat(x, 'g', 14, 64)
}

// argString reads Args[i] as a string (or a number, see scalarString).
func argString(args []any, i int) (string, error) {
	if i < len(args) {
		if s, ok := scalarString(args[i]); ok {
			return s, nil
		}
	}
	return "", fmt.Errorf("argument %d: string expected, got %s", i+1, typeName(args, i))
}

// optArgString is argString for an optional argument: def when it is
// absent or nil.
func optArgString(args []any, i int, def string) (string, error) {
	if i >= len(args) || args[i] == nil {
		return def, nil
	}
	return argString(args, i)
}

// argPath reads Args[i] as a non-empty path without NUL bytes.
func argPath(args []any, i int) (string, error) {
	p, err := argString(args, i)
	if err != nil {
		return "", err
	}
	if p == "" {
		return "", fmt.Errorf("argument %d: empty path", i+1)
	}
	return p, noNUL(p, fmt.Sprintf("argument %d", i+1))
}

// noNUL fails with "<what> contains a NUL byte" if s has one.
func noNUL(s, what string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%s contains a NUL byte", what)
	}
	return nil
}

// argStrings reads Args[i] as a list of strings (or numbers) without NUL
// bytes; nil or missing is none.
func argStrings(args []any, i int) ([]string, error) {
	if i >= len(args) || args[i] == nil {
		return nil, nil
	}
	list, ok := args[i].([]any)
	if !ok {
		return nil, fmt.Errorf("argument %d: list of strings expected, got %s", i+1, luaType(args[i]))
	}
	out := make([]string, len(list))
	for j, v := range list {
		s, ok := scalarString(v)
		if !ok {
			return nil, fmt.Errorf("argument %d: list of strings expected, got %s at [%d]", i+1, luaType(v), j+1)
		}
		if err := noNUL(s, fmt.Sprintf("[%d]", j+1)); err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		out[j] = s
	}
	return out, nil
}

// argTable reads Args[i] as a table with string keys: nil or missing is
// nil, and an empty list (what Lua's {} arrives as) an empty table.
func argTable(args []any, i int) (map[string]any, error) {
	if i >= len(args) || args[i] == nil {
		return nil, nil
	}
	m, err := asTable(args[i])
	if err != nil {
		return nil, fmt.Errorf("argument %d: %w", i+1, err)
	}
	return m, nil
}

// argOptions reads Args[i] as an options table (argTable) whose keys
// must be among known: an unknown key is an *optcheck.UnknownError, not
// wrapped in "argument i", so the caller's message reads
// "exec.run: unknown option 'timout' (did you mean 'timeout'?)".
func argOptions(args []any, i int, known ...string) (map[string]any, error) {
	m, err := argTable(args, i)
	if err != nil {
		return nil, err
	}
	return m, optcheck.Map(m, known...)
}

// asTable converts a payload table with string keys to a map[string]any.
func asTable(v any) (map[string]any, error) {
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case []any:
		if len(x) == 0 {
			return map[string]any{}, nil
		}
		return nil, errors.New("table with string keys expected, got a list")
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			s, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("table with string keys expected, got a %s key", luaType(k))
			}
			m[s] = e
		}
		return m, nil
	default:
		return nil, fmt.Errorf("table expected, got %s", luaType(v))
	}
}

// optString reads the string (or number) field key of an options table
// ("" if absent).
func optString(opts map[string]any, key string) (string, error) {
	v := opts[key]
	if v == nil {
		return "", nil
	}
	s, ok := scalarString(v)
	if !ok {
		return "", fmt.Errorf("%s: string expected, got %s", key, luaType(v))
	}
	return s, nil
}

// optTimeout reads the field "timeout" (seconds) of an options table: def
// if absent, forever if too large for a deadline; it must be positive.
func optTimeout(opts map[string]any, def time.Duration) (time.Duration, error) {
	v, ok := opts["timeout"]
	if !ok || v == nil {
		return def, nil
	}
	d, err := toDuration(v)
	if err != nil {
		return 0, fmt.Errorf("timeout: %w", err)
	}
	if d <= 0 {
		s, _ := scalarString(v)
		return 0, fmt.Errorf("timeout: must be positive, got %s", s)
	}
	return d, nil
}
