package team

import (
	"fmt"
	"strings"
	"testing"
)

// Ignored answers are said and kept one by one up to maxIgnored, then
// counted.
func TestIgnoreBounded(t *testing.T) {
	var said []string
	r := &request{warn: func(s string) { said = append(said, s) }}
	for i := range maxIgnored + 5 {
		r.ignore(fmt.Errorf("answer %d\x1b[31m", i))
	}
	all := r.ignoredAll()
	if len(all) != maxIgnored+1 || all[maxIgnored] != "and 5 more" || len(said) != maxIgnored+1 {
		t.Errorf("kept %q, said %q", all, said)
	}
	for _, s := range all {
		if strings.ContainsRune(s, '\x1b') {
			t.Errorf("an escape reached the audit log: %q", s)
		}
	}
}
