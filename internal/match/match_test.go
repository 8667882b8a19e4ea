package match

import (
	"testing"

	"github.com/askperm/askperm/decision"
)

func ptr(s string) *string { return &s }

func TestMatcher(t *testing.T) {
	c := NewCompiler()
	shell, err := c.Matcher(Spec{Fields: [4]*string{ptr("shell*"), nil, nil, ptr("exec")}, Dimensions: map[string]string{"command": "go test *"}})
	if err != nil {
		t.Fatal(err)
	}
	anyTool, _ := c.Matcher(Spec{Fields: [4]*string{ptr("*")}})
	everything, _ := c.Matcher(Spec{})
	for _, tc := range []struct {
		req                        decision.Request
		shell, anyTool, everything bool
	}{
		{decision.Request{Tool: "shell", Action: "exec", Dimensions: []decision.Dimension{{Name: "command", Value: "go test ./pkg"}}}, true, true, true},
		{decision.Request{Tool: "shell", Action: "exec", Dimensions: []decision.Dimension{{Name: "command", Value: "go test x; rm"}}}, false, true, true},
		{decision.Request{Tool: "shell", Action: "exec"}, false, true, true},                                                            // no such dimension
		{decision.Request{Action: "exec", Dimensions: []decision.Dimension{{Name: "command", Value: "go test x"}}}, false, false, true}, // no tool
	} {
		cache := NewCache(&tc.req)
		for _, m := range []struct {
			m    Matcher
			want bool
		}{{shell, tc.shell}, {anyTool, tc.anyTool}, {everything, tc.everything}} {
			// Twice: the second answer comes from the cache.
			if m.m.Match(cache) != m.want || m.m.Match(cache) != m.want {
				t.Errorf("%+v: want %v", tc.req, m.want)
			}
		}
	}
}

// One glob on two fields is two results in a cache.
func TestCacheKeepsFieldsApart(t *testing.T) {
	c := NewCompiler()
	onTool, _ := c.Matcher(Spec{Fields: [4]*string{ptr("a*")}})
	onServer, _ := c.Matcher(Spec{Fields: [4]*string{nil, ptr("a*")}})
	cache := NewCache(&decision.Request{Tool: "abc", Server: "xyz", Action: "x"})
	if !onTool.Match(cache) || onServer.Match(cache) {
		t.Error("the results of one glob on two fields were mixed up")
	}
}

func TestMatcherErrorsNameTheField(t *testing.T) {
	c := NewCompiler()
	if _, err := c.Matcher(Spec{Fields: [4]*string{nil, nil, ptr("a[")}}); err == nil || err.Error()[:8] != "source: " {
		t.Errorf("got %v", err)
	}
	if _, err := c.Matcher(Spec{Dimensions: map[string]string{"p": "{a"}}); err == nil || err.Error()[:13] != "dimensions.p:" {
		t.Errorf("got %v", err)
	}
}
