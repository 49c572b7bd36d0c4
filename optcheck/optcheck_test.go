package optcheck

import "testing"

func TestSuggest(t *testing.T) {
	known := []string{"dir", "stdin", "timeout"}
	cases := map[string]string{
		"timout":   "timeout", // removed
		"timeoutt": "timeout", // added
		"timeoat":  "timeout", // changed
		"tiemout":  "timeout", // swapped
		"Timeout":  "timeout", // case
		"dri":      "dir",
		"stdout":   "", // two edits
		"x":        "", // nothing near
		"timeout":  "", // itself
	}
	for name, want := range cases {
		if got := Suggest(name, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", name, got, want)
		}
	}
	if got := Suggest("ab", []string{"abc", "abd"}); got != "" {
		t.Errorf("two candidates one edit away: got %q, want none", got)
	}
}

func TestKeys(t *testing.T) {
	if err := Keys([]string{"timeout", "dir"}, "dir", "stdin", "timeout"); err != nil {
		t.Fatalf("known keys: %v", err)
	}
	err := Keys([]string{"timout", "dir"}, "timeout", "dir", "stdin")
	if err == nil || err.Error() != "unknown option 'timout' (did you mean 'timeout'?)" {
		t.Fatalf("got %v", err)
	}
	err = Map(map[string]any{"zz": 1, "aa": 2}, "timeout", "dir", "stdin")
	if err == nil || err.Error() != "unknown option 'aa' (the options are dir, stdin and timeout)" {
		t.Fatalf("got %v", err)
	}
	if err := Map(nil, "x"); err != nil {
		t.Fatalf("no options: %v", err)
	}
}
