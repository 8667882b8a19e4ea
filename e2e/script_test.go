package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestScript runs testdata/script/*.txtar: askperm fed a request on stdin
// and its exit status, decision and messages checked, one file a story,
// readable as examples. Beside testscript's own commands:
//
//	askperm ARGS...     runs the binary under test (with stdin from the
//	                    stdin command); like exec, it fails on a non-zero
//	                    exit unless negated
//	status N            the last askperm exited with N
//	fails N REGEXP      the last askperm exited with N, wrote nothing on
//	                    stdout and one line on stderr, "askperm: " and
//	                    text matching REGEXP
//	decision K=V...     stdout is one line, one decision valid against
//	                    docs/decision.schema.json, whose fields K are V
//	                    (a string as is, anything else as JSON; K= for
//	                    a field that is absent)
//	chown-nobody FILE   gives FILE to uid and gid 65534 (as root)
//
// and the condition [root]. go test ./e2e -run TestScript/NAME runs one
// file; -testwork keeps its directory.
//
// Environment: no HOME and no state directory, so nothing is remembered
// unless a script sets XDG_STATE_HOME; TESTDATA is the repository's
// testdata, DOCS its docs.
func TestScript(t *testing.T) {
	if f, err := os.Open("/dev/tty"); err == nil {
		f.Close()
		t.Skip("the tests have a controlling terminal (run them with go test): askperm would ask a person on it")
	}
	testdata, err := filepath.Abs("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Abs("../docs")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Vars = slices.DeleteFunc(env.Vars, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") })
			env.Setenv("LANG", "C.UTF-8")
			env.Setenv("TESTDATA", testdata)
			env.Setenv("DOCS", docs)
			env.Values[statusKey{}] = new(int)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"askperm":      scriptAskperm,
			"status":       scriptStatus,
			"fails":        scriptFails,
			"decision":     scriptDecision,
			"chown-nobody": scriptChownNobody,
		},
		Condition: func(cond string) (bool, error) {
			if cond != "root" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			return os.Geteuid() == 0, nil
		},
	})
}

// statusKey holds the exit status of a script's last askperm.
type statusKey struct{}

func scriptAskperm(ts *testscript.TestScript, neg bool, args []string) {
	err := ts.Exec(bin, args...)
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.Exited():
		code = ee.ExitCode()
	case err != nil:
		ts.Fatalf("askperm did not exit normally: %v", err)
	}
	*ts.Value(statusKey{}).(*int) = code
	if neg != (code != 0) {
		ts.Fatalf("askperm exited with %d", code)
	}
}

func scriptStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: status N")
	}
	if got := strconv.Itoa(*ts.Value(statusKey{}).(*int)); got != args[0] {
		ts.Fatalf("askperm exited with %s, want %s", got, args[0])
	}
}

func scriptFails(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: fails N REGEXP")
	}
	scriptStatus(ts, false, args[:1])
	if out := ts.ReadFile("stdout"); out != "" {
		ts.Fatalf("stdout is not empty: %q", out)
	}
	errText := ts.ReadFile("stderr")
	if !strings.HasPrefix(errText, "askperm: ") || strings.Count(errText, "\n") != 1 || !strings.HasSuffix(errText, "\n") {
		ts.Fatalf("stderr is not one askperm: line: %q", errText)
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	if !re.MatchString(errText) {
		ts.Fatalf("stderr %q does not match %q", errText, args[1])
	}
}

func scriptDecision(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: decision KEY=VALUE...")
	}
	out := ts.ReadFile("stdout")
	d, err := parseDecision(out)
	if err != nil {
		ts.Fatalf("%v", err)
	}
	for _, kv := range args {
		k, want, ok := strings.Cut(kv, "=")
		if !ok {
			ts.Fatalf("usage: decision KEY=VALUE...; got %q", kv)
		}
		var got string
		switch v := d[k].(type) {
		case nil:
		case string:
			got = v
		default:
			b, _ := json.Marshal(v)
			got = string(b)
		}
		if got != want {
			ts.Fatalf("decision %s is %q, want %q\n%s", k, got, want, out)
		}
	}
}

func scriptChownNobody(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: chown-nobody FILE")
	}
	ts.Check(os.Chown(ts.MkAbs(args[0]), 65534, 65534))
}

// parseDecision is checkDecision for a script: stdout must be exactly
// one line holding one decision valid against the schema.
func parseDecision(stdout string) (map[string]any, error) {
	if strings.Count(stdout, "\n") != 1 || !strings.HasSuffix(stdout, "\n") {
		return nil, fmt.Errorf("stdout is not exactly one line: %q", stdout)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(stdout))
	if err != nil {
		return nil, fmt.Errorf("stdout is not JSON: %v: %q", err, stdout)
	}
	if err := decisionSchema.Validate(inst); err != nil {
		return nil, fmt.Errorf("decision does not match the schema: %v\n%s", err, stdout)
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		return nil, err
	}
	return d, nil
}
