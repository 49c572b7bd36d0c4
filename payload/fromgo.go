package payload

// FromGo: the one rule by which a Go application's values become payload
// values (and so Lua values) — Runtime.Start's arguments, Send's and an
// Inbox's messages, a call's reply, a command's or a Go function's
// results. The rule, both ways, is the table on FromGo.
//
// Invariants: a value that is a payload value already is returned as it
// is, without a copy (only containers holding something to convert are
// copied, and only those); nothing is ever turned into its fmt.Sprint
// text; a refusal names the refused value's path as a Lua programmer
// would write it ("value.items[3].cb: func() cannot be sent"). Paths are
// built only on refusal, so a value that passes costs no strings.

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// FromGo returns v as a payload value, converted by this table, or a
// *ValueError naming the first part of v that has no Lua form. The Lua
// column is what a Lua process sees; "back" is what Go receives when Lua
// hands the value back (a process's result, a message, a command's
// arguments: the Lua → Go rule, luaproc's toPayload).
//
//	Go value                           Lua value                      back in Go
//	nil, a nil pointer or interface    nil (a map's value: no key)    nil
//	bool                               boolean                        bool
//	int, int8…int64, uint…uint64,      number                         int64
//	  uintptr, and named kinds                                        (float64 if not integral)
//	  (|n| > 2^53 only if exact;       (refused: "integer N cannot
//	  uint > MaxInt64 refused)           be sent ...")
//	float32, float64                   number                         int64 when integral, else float64
//	complex64, complex128              refused
//	string (and named string kinds)    string                         string
//	[]byte (any slice of a byte kind)  string (the bytes)             string
//	slice, array of any element type   sequence table {…}             []any (empty: []any{};
//	  (nil slice: empty table)                                          a nil inside: map[any]any)
//	map[K]V, K a string kind           table with string keys         map[string]any
//	  (nil map: empty table)             (empty: marked a JSON object) (empty: map[string]any{})
//	map[K]V, K a bool, int, uint or    table                          []any if the keys are 1..n,
//	  float kind (NaN refused)                                          else map[any]any
//	map with any other key type        refused
//	struct                             table of its json fields       map[string]any
//	  (exported fields, json:"name",
//	  json:"-" skipped, omitempty and
//	  omitzero honoured, embedded
//	  structs' fields promoted as by
//	  encoding/json; ",string" refused)
//	pointer                            what it points to              (as that)
//	interface                          what it holds                  (as that)
//	time.Time                          string, RFC 3339 with          string (time.Parse with
//	                                     nanoseconds (RFC3339Nano)      time.RFC3339Nano)
//	time.Duration                      number of nanoseconds          int64
//	scheduler.PID (a uint64 kind)      number (a PID in Lua)          int64 (scheduler.PID(n))
//	json.Marshaler                     its JSON, decoded (payload.Decode)
//	encoding.TextMarshaler             string (its text)              string
//	error                              string (its Error())           string
//	chan, func, unsafe.Pointer         refused
//	a cycle (a container in itself)    refused ("...: cycle")
//	nesting deeper than 200            refused
//	payload.Null                       json.null                      payload.Null
//
// json.Marshaler is tried before TextMarshaler, both before error, all
// after time.Time and before the kind's rule, as encoding/json does.
// A Lua number is a float64: integers beyond 2^53 that it cannot hold
// exactly are refused, never rounded.
//
// From Lua, whatever the value's origin: a table with keys 1..n only is
// []any, one with string keys only map[string]any, any other
// map[any]any (keys bool, int64, float64, string), an empty table
// []any{} (json.object(): map[string]any{}); a number int64 when it is
// integral and within int64 (not -0), else float64; a string a string.
// Functions, userdata, coroutines and cyclic tables are refused with
// the value's path.
func FromGo(v any) (any, error) {
	if isScalar(v) {
		return v, nil
	}
	var w walker
	out, _, err := w.value(v, 0)
	if err != nil {
		return nil, valueError("value", err)
	}
	return out, nil
}

// FromGoAll is FromGo for each element of a list, naming them arg1,
// arg2... It returns args itself when nothing in it needed converting.
func FromGoAll(args []any) (Payloads, error) {
	if allScalars(args) {
		return Payloads(args), nil
	}
	var w walker
	var out Payloads
	for i, v := range args {
		c, changed, err := w.value(v, 0)
		if err != nil {
			return nil, valueError("arg"+strconv.Itoa(i+1), err)
		}
		if changed && out == nil {
			out = append(Payloads(nil), args...)
		}
		if out != nil {
			out[i] = c
		}
	}
	if out == nil {
		return Payloads(args), nil
	}
	return out, nil
}

// isScalar reports whether v is a payload value without parts, which
// FromGo returns without starting a walk (whose cycle stack takes a
// moment to clear).
func isScalar(v any) bool {
	switch x := v.(type) {
	case nil, bool, float64, string, []byte, null:
		return true
	case int64:
		return exactInt(x)
	}
	return false
}

func allScalars(args []any) bool {
	for _, v := range args {
		if !isScalar(v) {
			return false
		}
	}
	return true
}

// A ValueError is a Go value that has no Lua form. Path names it as a
// Lua programmer would write it (value.items[3].cb, arg2["a b"]).
type ValueError struct {
	Path   string
	Reason string
}

func (e *ValueError) Error() string { return e.Path + ": " + e.Reason }

// refusal is a ValueError on its way up: the steps of its path gather,
// innermost first, as the walk returns through each container.
type refusal struct {
	steps  []string
	reason string
}

func (r *refusal) Error() string { return r.reason }

func refuse(format string, args ...any) error {
	return &refusal{reason: fmt.Sprintf(format, args...)}
}

// at adds a container's step to a refusal's path.
func at(err error, step string) error {
	if r, ok := err.(*refusal); ok {
		r.steps = append(r.steps, step)
	}
	return err
}

func valueError(root string, err error) error {
	r, ok := err.(*refusal)
	if !ok {
		return err
	}
	var b strings.Builder
	b.WriteString(root)
	for i := len(r.steps) - 1; i >= 0; i-- {
		b.WriteString(r.steps[i])
	}
	return &ValueError{Path: b.String(), Reason: r.reason}
}

func indexStep(i int) string { return "[" + strconv.Itoa(i+1) + "]" }

func keyStep(k any) string { return JoinKey("", k) }

// ident is a container's identity: its address and type (a struct and
// its first field share an address).
type ident struct {
	p uintptr
	t reflect.Type
}

// walker holds the containers on the current path, to refuse cycles: the
// first openInline in an array (no allocation for usual values), the
// rest in a map.
type walker struct {
	open [openInline]ident
	n    int
	deep map[ident]bool
}

const openInline = 16

// push enters container id, refusing it if it is on the path already.
func (w *walker) push(id ident, depth int) error {
	if depth > maxDepth {
		return refuse("nested deeper than %d", maxDepth)
	}
	for _, o := range w.open[:min(w.n, openInline)] {
		if o == id {
			return refuse("cycle")
		}
	}
	if w.n < openInline {
		w.open[w.n] = id
	} else {
		if w.deep[id] {
			return refuse("cycle")
		}
		if w.deep == nil {
			w.deep = map[ident]bool{}
		}
		w.deep[id] = true
	}
	w.n++
	return nil
}

func (w *walker) pop(id ident) {
	w.n--
	if w.n >= openInline {
		delete(w.deep, id)
	}
}

var (
	anyListType = reflect.TypeFor[[]any]()
	strMapType  = reflect.TypeFor[map[string]any]()
	anyMapType  = reflect.TypeFor[map[any]any]()
	timeType    = reflect.TypeFor[time.Time]()
	jsonMarsh   = reflect.TypeFor[json.Marshaler]()
	textMarsh   = reflect.TypeFor[encoding.TextMarshaler]()
	errorType   = reflect.TypeFor[error]()
)

// value converts v; changed reports whether the result is not v itself.
// The payload types and the commonest others are switched on directly;
// the rest go through reflection.
func (w *walker) value(v any, depth int) (out any, changed bool, err error) {
	switch x := v.(type) {
	case nil, bool, float64, string, []byte, null:
		return v, false, nil
	case int64:
		if !exactInt(x) {
			return nil, false, inexact(x)
		}
		return v, false, nil
	case int:
		if !exactInt(int64(x)) {
			return nil, false, inexact(int64(x))
		}
		return int64(x), true, nil
	case []any:
		return w.list(v, x, depth)
	case map[string]any:
		return w.strMap(x, depth)
	case map[any]any:
		return w.anyMap(x, depth)
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, true, nil
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, s := range x {
			out[k] = s
		}
		return out, true, nil
	case time.Time:
		return x.Format(time.RFC3339Nano), true, nil
	}
	out, err = w.reflect(reflect.ValueOf(v), depth)
	return out, true, err
}

func (w *walker) list(v any, x []any, depth int) (any, bool, error) {
	if len(x) == 0 {
		return v, false, nil
	}
	id := ident{ptrOf(&x[0]), anyListType}
	if err := w.push(id, depth); err != nil {
		return nil, false, err
	}
	var out []any
	for i, e := range x {
		c, changed, err := w.value(e, depth+1)
		if err != nil {
			w.pop(id)
			return nil, false, at(err, indexStep(i))
		}
		if changed && out == nil {
			out = append([]any(nil), x...)
		}
		if out != nil {
			out[i] = c
		}
	}
	w.pop(id)
	if out == nil {
		return v, false, nil
	}
	return out, true, nil
}

func (w *walker) strMap(x map[string]any, depth int) (any, bool, error) {
	id := ident{mapID(x), strMapType}
	if err := w.push(id, depth); err != nil {
		return nil, false, err
	}
	var out map[string]any
	for k, e := range x {
		c, changed, err := w.value(e, depth+1)
		if err != nil {
			w.pop(id)
			return nil, false, at(err, keyStep(k))
		}
		if changed {
			if out == nil {
				out = maps.Clone(x)
			}
			out[k] = c
		}
	}
	w.pop(id)
	if out == nil {
		return x, false, nil
	}
	return out, true, nil
}

func (w *walker) anyMap(x map[any]any, depth int) (any, bool, error) {
	id := ident{mapID(x), anyMapType}
	if err := w.push(id, depth); err != nil {
		return nil, false, err
	}
	defer w.pop(id)
	var out map[any]any
	for k, e := range x {
		kk, kchanged, err := w.key(reflect.ValueOf(k))
		if err != nil {
			return nil, false, err
		}
		c, changed, err := w.value(e, depth+1)
		if err != nil {
			return nil, false, at(err, keyStep(kk))
		}
		if (changed || kchanged) && out == nil {
			out = maps.Clone(x)
		}
		if kchanged {
			delete(out, k)
			if _, dup := out[kk]; dup {
				return nil, false, refuse("two keys are both the Lua key %s", keyText(kk))
			}
		}
		if out != nil {
			out[kk] = c
		}
	}
	if out == nil {
		return x, false, nil
	}
	return out, true, nil
}

// key converts a map's key: a string, bool, integer or float kind (not
// NaN); changed reports whether it is not the key itself.
func (w *walker) key(k reflect.Value) (any, bool, error) {
	if !k.IsValid() {
		return nil, false, refuse("a nil key cannot be sent")
	}
	var out any
	switch k.Kind() {
	case reflect.String:
		out = k.String()
	case reflect.Bool:
		out = k.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := integer(k)
		if err != nil {
			return nil, false, err
		}
		out = n
	case reflect.Float32, reflect.Float64:
		if math.IsNaN(k.Float()) {
			return nil, false, refuse("NaN cannot be a key")
		}
		out = k.Float()
	case reflect.Interface:
		return w.key(k.Elem())
	default:
		return nil, false, refuse("a key of type %s cannot be sent", k.Type())
	}
	canonical := k.Type() == reflect.TypeOf(out)
	return out, !canonical, nil
}

// exactInt reports whether a Lua number (a float64) holds n exactly.
func exactInt(n int64) bool {
	return n >= -1<<53 && n <= 1<<53 || int64(float64(n)) == n
}

func inexact(n int64) error {
	return refuse("integer %d cannot be sent: a Lua number would round it (integers are exact to 2^53)", n)
}

// integer is an integer kind's value as an int64 a Lua number holds.
func integer(rv reflect.Value) (int64, error) {
	var n int64
	if rv.CanInt() {
		n = rv.Int()
	} else {
		u := rv.Uint()
		if u > math.MaxInt64 {
			return 0, refuse("integer %d cannot be sent: it is beyond int64", u)
		}
		n = int64(u)
	}
	if !exactInt(n) {
		return 0, inexact(n)
	}
	return n, nil
}
