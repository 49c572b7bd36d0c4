// Package optcheck makes a misspelt option loud. Every function of the
// Lua API that takes a table of options (exec.run's opts, http.request's
// table, http.serve's opts, process.receive{...}, supervisor specs, ...)
// checks its keys against the ones it knows with Keys or Map, so that
// exec.run("sleep", {"3"}, {timout = 0.5}) raises
//
//	unknown option 'timout' (did you mean 'timeout'?)
//
// instead of running three seconds. The error does not name the
// function: its caller prefixes it, as it prefixes its other errors.
//
// Suggest, the did-you-mean, also serves entry points (a script that
// defines mian but no main).
package optcheck

import (
	"fmt"
	"slices"
	"strings"
)

// UnknownError is an option key that the function does not take.
type UnknownError struct {
	Key   string   // as the script wrote it (a non-string key as "[1]")
	Known []string // the keys that exist, sorted
}

func (e *UnknownError) Error() string {
	if s := Suggest(e.Key, e.Known); s != "" {
		return fmt.Sprintf("unknown option '%s' (did you mean '%s'?)", e.Key, s)
	}
	return fmt.Sprintf("unknown option '%s' (the options are %s)", e.Key, list(e.Known))
}

// list writes keys as "a, b and c".
func list(keys []string) string {
	switch len(keys) {
	case 0:
		return "none"
	case 1:
		return keys[0]
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1]
}

// Keys checks keys (a table's, in any order) against known: the error
// names the first unknown key in sorted order, so the message does not
// depend on a table's iteration order.
func Keys(keys []string, known ...string) error {
	var bad []string
	for _, k := range keys {
		if !slices.Contains(known, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	sorted := slices.Clone(known)
	slices.Sort(sorted)
	return &UnknownError{Key: bad[0], Known: sorted}
}

// Map is Keys for an options table converted to Go (nil: no options).
func Map(m map[string]any, known ...string) error {
	for k := range m {
		if !slices.Contains(known, k) {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			return Keys(keys, known...)
		}
	}
	return nil
}

// Suggest is the one of candidates that name is one edit away from (a
// letter added, removed, changed, or two neighbours swapped; case
// ignored), or "" if there is none or more than one.
func Suggest(name string, candidates []string) string {
	found := ""
	for _, c := range candidates {
		if c != name && oneEdit(strings.ToLower(name), strings.ToLower(c)) {
			if found != "" {
				return ""
			}
			found = c
		}
	}
	return found
}

// oneEdit reports whether a and b differ by at most one insertion,
// deletion, substitution or swap of adjacent bytes.
func oneEdit(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if len(a) < len(b) { // one byte inserted at i
		return a[i:] == b[i+1:]
	}
	if i >= len(a)-1 { // equal, or only the last byte differs
		return true
	}
	return a[i+1:] == b[i+1:] || // changed at i
		a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:] // swapped at i
}
