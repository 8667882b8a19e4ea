package form

import "testing"

func TestExpandTabs(t *testing.T) {
	for in, want := range map[string]string{
		"a\tb":        "a       b",
		"\t":          "        ",
		"12345678\tx": "12345678        x",
		"ab\n\tc":     "ab\n        c",
		"│ \tx":       "│       x",
	} {
		if got := ExpandTabs(in); got != want {
			t.Errorf("ExpandTabs(%q) = %q, want %q", in, got, want)
		}
	}
}
