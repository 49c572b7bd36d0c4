package lua

// Measure: the bytes a state holds, by a walk of what is reachable from
// roots the owner names (luaproc: the state, its globals and registry,
// its tasks' coroutines). The owner re-bases its memory count on it
// (memory.go), since the count only adds.
//
// What it counts, as the charges do (the same sizes): each table once
// (its parts' capacities; shared tables not at all, they are the
// runtime's; a copy-on-write view only its own part), each Lua closure
// and its upvalues once, each coroutine once (its value stack by
// capacity; call frames by depth), each string of 64 bytes or more once
// (by its data pointer: one string stored a million times is one
// string), shorter strings at every reference (their boxes are), numbers
// as 8 bytes. What it does not see: compiled code (prototypes; a script's
// are shared), Go values inside userdata, Go functions' own data.
//
// It allocates a set of the objects it has seen (about 40 bytes an
// object) and a work list; it runs on the state's goroutine, which must
// not run the state meanwhile.

import "unsafe"

// bigString is the least length at which a string is counted once, not
// at each reference.
const bigString = 64

type measurer struct {
	seen  map[unsafe.Pointer]struct{}
	work  []LValue
	total int64
}

// Measure returns the bytes held by the values reachable from roots.
func Measure(roots ...LValue) int64 {
	m := measurer{seen: make(map[unsafe.Pointer]struct{}, 64)}
	for _, r := range roots {
		m.add(r)
	}
	for len(m.work) > 0 {
		v := m.work[len(m.work)-1]
		m.work = m.work[:len(m.work)-1]
		m.walk(v)
	}
	return m.total
}

// first reports whether p is seen for the first time.
func (m *measurer) first(p unsafe.Pointer) bool {
	if _, ok := m.seen[p]; ok {
		return false
	}
	m.seen[p] = struct{}{}
	return true
}

// add counts v now if it is a leaf, or queues it once.
func (m *measurer) add(v LValue) {
	switch v := v.(type) {
	case nil, *LNilType, LBool:
	case LNumber:
		m.total += 8
	case LString:
		if len(v) < bigString || m.first(unsafe.Pointer(unsafe.StringData(string(v)))) {
			m.total += int64(stringBytes + len(v))
		}
	case *LTable:
		if v != nil && !v.IsShared() && m.first(unsafe.Pointer(v)) {
			m.work = append(m.work, v)
		}
	case *LFunction:
		if v != nil && m.first(unsafe.Pointer(v)) {
			m.work = append(m.work, v)
		}
	case *LState:
		if v != nil && m.first(unsafe.Pointer(v)) {
			m.work = append(m.work, v)
		}
	case *LUserData:
		if v != nil && m.first(unsafe.Pointer(v)) {
			m.work = append(m.work, v)
		}
	}
}

func (m *measurer) walk(v LValue) {
	switch v := v.(type) {
	case *LTable:
		m.walkTable(v)
	case *LFunction:
		if !v.IsG {
			m.total += int64(functionBytes + len(v.Upvalues)*upvalueBytes)
		}
		if v.Env != nil {
			m.add(v.Env)
		}
		for _, uv := range v.Upvalues {
			if uv != nil {
				m.add(uv.Value())
			}
		}
	case *LState:
		m.walkThread(v)
	case *LUserData:
		m.total += 48
		if v.Env != nil {
			m.add(v.Env)
		}
		m.add(v.Metatable)
	}
}

func (m *measurer) walkTable(tb *LTable) {
	m.total += int64(tableBytes + cap(tb.array)*valueBytes + cap(tb.node)*nodeBytes)
	m.add(tb.Metatable)
	for _, v := range tb.array {
		m.add(v)
	}
	for i := range tb.node {
		if n := &tb.node[i]; n.val != nil && n.val != LNil {
			m.add(n.key)
			m.add(n.val)
		}
	}
}

func (m *measurer) walkThread(ls *LState) {
	m.total += int64(threadBytes + cap(ls.reg.array)*valueBytes)
	m.total += int64(ls.stack.Sp()) * frameBytes
	if ls.Env != nil {
		m.add(ls.Env)
	}
	top := min(ls.reg.Top(), len(ls.reg.array))
	for _, v := range ls.reg.array[:top] {
		m.add(v)
	}
	for cf := ls.currentFrame; cf != nil; cf = cf.Parent {
		if cf.Fn != nil {
			m.add(cf.Fn)
		}
	}
}

// StackCap is the capacity of ls's value stack, in slots (luaproc's
// tests: the coroutine of an idle process has not grown it).
func (ls *LState) StackCap() int { return cap(ls.reg.array) }
