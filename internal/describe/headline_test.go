package describe

import (
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

// TestHeadlineReads: the question of every action Describe produces,
// over every combination of annotations, says it as English, with a
// path, a URL or a command line to name.
func TestHeadlineReads(t *testing.T) {
	hints := []*bool{nil, yes(), no()}
	verbs := map[string]string{"read": "read ", "write": "write ", "destructive": "change or delete ", "network": "reach "}
	anns := []*decision.Annotations{nil}
	for _, r := range hints {
		for _, d := range hints {
			for _, o := range hints {
				anns = append(anns, &decision.Annotations{ReadOnlyHint: r, DestructiveHint: d, OpenWorldHint: o})
			}
		}
	}
	for _, a := range anns {
		for args, want := range map[string]func(action string) string{
			`{"path":"/tmp/x"}`:           func(action string) string { return verbs[action] + "/tmp/x" },
			`{"url":"https://x.test/"}`:   func(action string) string { return verbs[action] + "https://x.test/" },
			`{"command":"rm -rf /tmp/x"}`: func(string) string { return "run rm -rf /tmp/x" },
		} {
			req, err := Describe(Call{Server: "s", Tool: "t", Arguments: []byte(args), Annotations: a})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := verbs[req.Action]; !ok {
				t.Fatalf("Describe(%s) gives action %q, which the test does not know", args, req.Action)
			}
			got := form.New(req, form.Options{}).Headline()
			if w := "t (s) wants to " + want(req.Action); !strings.HasPrefix(got, w) {
				t.Errorf("annotations %+v, %s: headline %q, want it to start %q", a, args, got, w)
			}
		}
	}
}
