package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestSessionApprovalIsOfTheCallSeen: an allow for the session of
// execute_sql on staging does not allow the same SQL on prod, nor the
// same call from another server asking for grants never approved.
func TestSessionApprovalIsOfTheCallSeen(t *testing.T) {
	env := memoryEnv()
	staging := `{"server":"staging","tool":"execute_sql","action":"execute","session_id":"s-1","arguments":{"sql":"DELETE FROM users"}}`
	if d := checkDecision(t, runPipe(t, []byte(staging), env, "--answer", "allow-session").stdout); d["persist"] != "session" {
		t.Fatalf("first: %v", d)
	}
	for name, raw := range map[string]string{
		"prod":   strings.Replace(staging, "staging", "prod", 1),
		"grants": strings.Replace(staging, `"staging"`, `"other","grants":[{"name":"net.all"},{"name":"exec.any"}]`, 1),
	} {
		if d := checkDecision(t, runPipe(t, []byte(raw), env, "--frontend", "none").stdout); d["cause"] != "unavailable" {
			t.Errorf("%s: %v", name, d)
		}
	}
	if d := checkDecision(t, runPipe(t, []byte(staging), env, "--frontend", "none").stdout); d["cause"] != "session" {
		t.Errorf("the same call: %v", d)
	}
}

// pathRequest reads path, offering this file (exact) and the project
// (prefix) as scopes, the default at def.
func pathRequest(path, proj string, def int) []byte {
	return fmt.Appendf(nil, `{"tool":"read_file","action":"read","dimensions":[{"name":"path","value":%s,"default":%d,"scopes":[
		{"label":"this file","match":%s,"kind":"exact"},{"label":"the project","match":%s,"kind":"prefix"}]}]}`,
		jsonString(path), def, jsonString(path), jsonString(proj+"/"))
}

// TestDenyWinsOverEverySpelling: a remembered exact deny of proj/sub/.env
// covers its other spellings although a rules file and a remembered rule
// allow the project; a symlink in the project leading out of it is not
// allowed by either, and a deny of where it leads covers it.
func TestDenyWinsOverEverySpelling(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, home := d+"/proj", d+"/home"
	for _, p := range []string{proj + "/sub/x", home} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{proj + "/sub/.env", proj + "/a.go", home + "/.bashrc"} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(home, proj+"/lnk"); err != nil {
		t.Fatal(err)
	}
	rules := rulesFile(t, fmt.Sprintf("[[rule]]\nname = \"project\"\ntool = \"read_file\"\ndimensions = { path = %s }\n", jsonString(proj+"/**")))
	env := memoryEnv()
	for _, step := range []struct {
		req    []byte
		answer string
	}{
		{pathRequest(proj+"/sub/.env", proj, 0), "deny-always"},
		{pathRequest(home+"/.bashrc", home, 0), "deny-always"},
		{pathRequest(proj+"/a.go", proj, 1), "allow-always"},
	} {
		if d := checkDecision(t, runPipe(t, step.req, env, "--answer", step.answer).stdout); d["persist"] != "always" {
			t.Fatalf("%s: %v", step.answer, d)
		}
	}
	for _, v := range []string{proj + "/sub/./.env", proj + "//sub/.env", proj + "/sub/x/../.env", proj + "/lnk/.bashrc"} {
		for _, args := range [][]string{{"--frontend", "none"}, {"--frontend", "none", "--rules", rules}} {
			d := checkDecision(t, runPipe(t, pathRequest(v, proj, 0), env, args...).stdout)
			if d["decision"] != "deny" || d["cause"] != "rule" {
				t.Errorf("%s %v: %v", v, args, d)
			}
		}
	}
	// Without the deny, the escape is still not allowed: it is asked.
	fresh := memoryEnv()
	runPipe(t, pathRequest(proj+"/a.go", proj, 1), fresh, "--answer", "allow-always")
	for _, args := range [][]string{{"--frontend", "none"}, {"--frontend", "none", "--rules", rules}} {
		wantDeny(t, checkDecision(t, runPipe(t, pathRequest(proj+"/lnk/.bashrc", proj, 0), fresh, args...).stdout), "unavailable", "none")
	}
	if d := checkDecision(t, runPipe(t, pathRequest(proj+"/sub/./.env", proj, 0), fresh, "--frontend", "none").stdout); d["decision"] != "allow" {
		t.Errorf("a spelling of a path in the project is not allowed: %v", d)
	}
}

// commandRequest runs cmd, offering its leading words as a words scope.
func commandRequest(cmd, words string) []byte {
	return fmt.Appendf(nil, `{"tool":"Bash","action":"exec","dimensions":[{"name":"command","value":%s,"scopes":[
		{"label":"commands starting with","match":%s,"kind":"words"}]}]}`, jsonString(cmd), jsonString(words))
}

// TestWordsDenyCoversShellSyntax: a remembered deny of the words rm -rf
// covers rm -rf ~, rm -rf *, rm -rf ~/.ssh and rm -rf ~/*, although a rules file allows rm *; the rule says it came from
// a canned answer.
func TestWordsDenyCoversShellSyntax(t *testing.T) {
	env := memoryEnv()
	checkDecision(t, runPipe(t, commandRequest("rm -rf build", "rm -rf"), env, "--answer", "deny-always").stdout)
	rules := rulesFile(t, "[[rule]]\nname = \"rm\"\ntool = \"Bash\"\ndimensions = { command = \"rm *\" }\n")
	for _, cmd := range []string{"rm -rf ~", "rm -rf *", "rm -rf ~/.ssh", "rm -rf ~/*"} {
		if d := checkDecision(t, runPipe(t, commandRequest(cmd, "rm -rf"), baseEnv(), "--frontend", "none", "--rules", rules).stdout); d["decision"] != "allow" {
			t.Fatalf("%s: the rules file does not allow it: %v", cmd, d)
		}
		d := checkDecision(t, runPipe(t, commandRequest(cmd, "rm -rf"), env, "--frontend", "none", "--rules", rules).stdout)
		if d["decision"] != "deny" || d["cause"] != "rule" {
			t.Errorf("%s: %v", cmd, d)
		}
	}
	var listed []map[string]any
	if err := json.Unmarshal([]byte(runIn(t, env, "rules", "list", "--json")), &listed); err != nil || len(listed) != 1 || listed[0]["origin"] != "answers" {
		t.Errorf("rules: %v, %v", listed, err)
	}
	if table := runIn(t, env, "rules", "list"); !strings.Contains(table, "canned-answer") {
		t.Errorf("table: %q", table)
	}
}

// TestRulesDenyReadsCommands: a rules file's deny of rm -rf * denies a
// line holding rm -rf among other commands, where a canned answer would
// otherwise allow it.
func TestRulesDenyReadsCommands(t *testing.T) {
	rules := rulesFile(t, "[[rule]]\nname = \"no-rm\"\ndecision = \"deny\"\ntool = \"Bash\"\ndimensions = { command = \"rm -rf *\" }\n")
	for _, cmd := range []string{"cd / && rm -rf ~", "echo $(rm -rf ~/.ssh)", "true\nrm -rf *"} {
		d := checkDecision(t, runPipe(t, commandRequest(cmd, "rm -rf"), baseEnv(), "--rules", rules, "--answer", "allow-once").stdout)
		if d["decision"] != "deny" || d["cause"] != "rule" {
			t.Errorf("%q: %v", cmd, d)
		}
	}
}
