package payload

// FromGo's general case: any Go value, through reflection, by the table
// on FromGo. Struct types' field lists are worked out once (fieldsOf)
// and cached.

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// reflect converts rv (changed: always, as a value reached here is not a
// payload value).
func (w *walker) reflect(rv reflect.Value, depth int) (any, error) {
	if !rv.IsValid() {
		return nil, nil
	}
	if depth > maxDepth {
		return nil, refuse("nested deeper than %d", maxDepth)
	}
	if out, ok, err := w.methods(rv, depth); ok {
		return out, err
	}
	if t := rv.Type(); (t == strMapType || t == anyMapType) && rv.CanInterface() {
		out, _, err := w.value(rv.Interface(), depth) // their fast paths
		return out, err
	}
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return integer(rv)
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	case reflect.String:
		return rv.String(), nil
	case reflect.Slice:
		return w.slice(rv, depth)
	case reflect.Array:
		return w.elements(rv, depth)
	case reflect.Map:
		return w.mapOf(rv, depth)
	case reflect.Pointer:
		return w.pointer(rv, depth)
	case reflect.Interface:
		if rv.IsNil() {
			return nil, nil
		}
		if rv.CanInterface() { // the payload types' fast paths
			out, _, err := w.value(rv.Interface(), depth)
			return out, err
		}
		return w.reflect(rv.Elem(), depth)
	case reflect.Struct:
		return w.structOf(rv, depth)
	}
	return nil, refuse("%s cannot be sent", rv.Type())
}

// methods converts the types whose methods give their form: time.Time,
// json.Marshaler, encoding.TextMarshaler and error, in that order; ok
// reports whether rv is one.
func (w *walker) methods(rv reflect.Value, depth int) (out any, ok bool, err error) {
	t := rv.Type()
	if t.NumMethod() == 0 || t.Kind() == reflect.Interface || !rv.CanInterface() {
		return nil, false, nil
	}
	switch {
	case t == timeType:
		return rv.Interface().(time.Time).Format(time.RFC3339Nano), true, nil
	case t.Kind() == reflect.Pointer && t.Elem() == timeType:
		return nil, false, nil // followed to the time.Time (its MarshalJSON refuses years past 9999)
	case t.Implements(jsonMarsh):
		if nilPointer(rv) {
			return nil, true, nil
		}
		return w.marshaled(rv.Interface().(json.Marshaler), depth)
	case t.Implements(textMarsh):
		if nilPointer(rv) {
			return nil, true, nil
		}
		b, err := rv.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return nil, true, refuse("MarshalText: %v", err)
		}
		return string(b), true, nil
	case t.Implements(errorType):
		if nilPointer(rv) {
			return nil, true, nil
		}
		return rv.Interface().(error).Error(), true, nil
	}
	return nil, false, nil
}

func nilPointer(rv reflect.Value) bool {
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// marshaled is a json.Marshaler's JSON as a value (held to the same rule:
// a number past 2^53 in it is refused).
func (w *walker) marshaled(m json.Marshaler, depth int) (any, bool, error) {
	b, err := m.MarshalJSON()
	if err != nil {
		return nil, true, refuse("MarshalJSON: %v", err)
	}
	v, err := Decode(b)
	if err != nil {
		return nil, true, refuse("MarshalJSON: %v", err)
	}
	out, _, err := w.value(v, depth)
	return out, true, err
}

func (w *walker) slice(rv reflect.Value, depth int) (any, error) {
	if rv.Type().Elem().Kind() == reflect.Uint8 {
		return rv.Bytes(), nil
	}
	if rv.Len() == 0 {
		return []any{}, nil
	}
	id := ident{rv.Pointer(), rv.Type()}
	if err := w.push(id, depth); err != nil {
		return nil, err
	}
	defer w.pop(id)
	return w.elements(rv, depth)
}

// elements converts a slice's or an array's elements into a list.
func (w *walker) elements(rv reflect.Value, depth int) (any, error) {
	out := make([]any, rv.Len())
	for i := range out {
		c, err := w.reflect(rv.Index(i), depth+1)
		if err != nil {
			return nil, at(err, indexStep(i))
		}
		out[i] = c
	}
	return out, nil
}

func (w *walker) pointer(rv reflect.Value, depth int) (any, error) {
	if rv.IsNil() {
		return nil, nil
	}
	id := ident{rv.Pointer(), rv.Type()}
	if err := w.push(id, depth); err != nil {
		return nil, err
	}
	defer w.pop(id)
	return w.reflect(rv.Elem(), depth+1)
}

// mapOf converts a map: string-kind keys make a map[string]any, other
// keys a map[any]any.
func (w *walker) mapOf(rv reflect.Value, depth int) (any, error) {
	if rv.Len() > 0 {
		id := ident{rv.Pointer(), rv.Type()}
		if err := w.push(id, depth); err != nil {
			return nil, err
		}
		defer w.pop(id)
	}
	if rv.Type().Key().Kind() == reflect.String {
		out := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			k := it.Key().String()
			c, err := w.reflect(it.Value(), depth+1)
			if err != nil {
				return nil, at(err, keyStep(k))
			}
			out[k] = c
		}
		return out, nil
	}
	out := make(map[any]any, rv.Len())
	for it := rv.MapRange(); it.Next(); {
		k, _, err := w.key(it.Key())
		if err != nil {
			return nil, err
		}
		c, err := w.reflect(it.Value(), depth+1)
		if err != nil {
			return nil, at(err, keyStep(k))
		}
		if _, dup := out[k]; dup {
			return nil, refuse("two keys are both the Lua key %s", keyText(k))
		}
		out[k] = c
	}
	return out, nil
}

// structOf converts a struct into a map of its json fields.
func (w *walker) structOf(rv reflect.Value, depth int) (any, error) {
	fields, err := fieldsOf(rv.Type())
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		fv, ok := fieldByIndex(rv, f.index)
		if !ok || f.omitEmpty && isEmpty(fv) || f.omitZero && fv.IsZero() {
			continue
		}
		c, err := w.reflect(fv, depth+1)
		if err != nil {
			return nil, at(err, keyStep(f.name))
		}
		out[f.name] = c
	}
	return out, nil
}

// fieldByIndex is rv.FieldByIndex, false where an embedded pointer on the
// way is nil (encoding/json leaves those fields out).
func fieldByIndex(rv reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && rv.Kind() == reflect.Pointer {
			if rv.IsNil() {
				return reflect.Value{}, false
			}
			rv = rv.Elem()
		}
		rv = rv.Field(x)
	}
	return rv, true
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(rv reflect.Value) bool {
	switch rv.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return rv.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return rv.IsZero()
	}
	return false
}

// field is one json field of a struct type.
type field struct {
	name      string
	index     []int
	omitEmpty bool
	omitZero  bool
	tagged    bool // named by its tag
}

type fieldList struct {
	fields []field
	err    string // why the type is refused
}

var fieldCache sync.Map // reflect.Type → fieldList

// fieldsOf returns t's json fields, worked out once per type.
func fieldsOf(t reflect.Type) ([]field, error) {
	fl, ok := fieldCache.Load(t)
	if !ok {
		fields, err := typeFields(t)
		l := fieldList{fields: fields}
		if err != nil {
			l.err = err.Error()
		}
		fl, _ = fieldCache.LoadOrStore(t, l)
	}
	l := fl.(fieldList)
	if l.err != "" {
		return nil, refuse("%s", l.err) // a refusal of its own: at() adds to it
	}
	return l.fields, nil
}

// typeFields lists t's json fields as encoding/json does: exported
// fields, named by their tag or else their name, json:"-" skipped; the
// fields of an embedded struct without a tag name promoted, breadth
// first; of fields with the same name the shallowest wins, then the
// tagged one, and if that leaves several, none.
func typeFields(t reflect.Type) ([]field, error) {
	var all []field
	visited := map[reflect.Type]bool{}
	next := []field{{index: nil}}
	types := []reflect.Type{t}
	for len(next) > 0 {
		cur, curTypes := next, types
		next, types = nil, nil
		for i, q := range cur {
			st := curTypes[i]
			if visited[st] {
				continue
			}
			visited[st] = true
			for j := range st.NumField() {
				f, embedded, err := structField(st.Field(j), append(slices.Clip(q.index), j))
				switch {
				case err != nil:
					return nil, err
				case embedded != nil:
					next, types = append(next, f), append(types, embedded)
				case f.index != nil:
					all = append(all, f)
				}
			}
		}
	}
	return dominant(all), nil
}

// structField reads one field's tag: the field (index nil if skipped), or
// the struct type it embeds whose fields are promoted.
func structField(sf reflect.StructField, index []int) (field, reflect.Type, error) {
	ft := sf.Type
	if ft.Name() == "" && ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	tag := sf.Tag.Get("json")
	if tag == "-" || !sf.IsExported() && !(sf.Anonymous && ft.Kind() == reflect.Struct) {
		return field{}, nil, nil
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
		return field{index: index}, ft, nil
	}
	if !sf.IsExported() {
		return field{}, nil, nil
	}
	f := field{name: name, index: index, tagged: name != ""}
	if name == "" {
		f.name = sf.Name
	}
	for _, o := range strings.Split(opts, ",") {
		switch o {
		case "omitempty":
			f.omitEmpty = true
		case "omitzero":
			f.omitZero = true
		case "string":
			return field{}, nil, refuse(`field %s: the json option ",string" is not supported`, sf.Name)
		}
	}
	return f, nil, nil
}

// dominant keeps, of the fields sharing a name, the one encoding/json
// would: the shallowest, then the tagged; a tie drops them all.
func dominant(all []field) []field {
	byName := map[string][]field{}
	var names []string
	for _, f := range all {
		if byName[f.name] == nil {
			names = append(names, f.name)
		}
		byName[f.name] = append(byName[f.name], f)
	}
	var out []field
	for _, n := range names {
		fs := byName[n]
		depth := len(fs[0].index)
		for _, f := range fs {
			depth = min(depth, len(f.index))
		}
		var top, tagged []field
		for _, f := range fs {
			if len(f.index) == depth {
				top = append(top, f)
				if f.tagged {
					tagged = append(tagged, f)
				}
			}
		}
		switch {
		case len(top) == 1:
			out = append(out, top[0])
		case len(tagged) == 1:
			out = append(out, tagged[0])
		}
	}
	return out
}
