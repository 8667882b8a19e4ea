package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// auditLine is a line of a generated audit log, as the pipeline writes
// it (docs/configuration.md).
type auditLine struct {
	Time       time.Time         `json:"time"`
	Server     string            `json:"server,omitempty"`
	Tool       string            `json:"tool"`
	Action     string            `json:"action"`
	Dimensions map[string]string `json:"dimensions,omitempty"`
	Shells     map[string]string `json:"shells,omitempty"`
	Decision   string            `json:"decision"`
	Persist    string            `json:"persist"`
	Cause      string            `json:"cause"`
	Frontend   string            `json:"frontend"`
	Stop       bool              `json:"stop,omitempty"`
	LatencyMS  int64             `json:"latency_ms"`
	AskedMS    *int64            `json:"asked_ms,omitempty"`
}

// generatedLog is the log: a person approving go test 20 times,
// denying rm once, approving reads under one folder, a group below the
// minimum, a group with one deny, hosts on two servers, and decisions by
// rules, memory, canned answers and timeouts, which count for nothing.
func generatedLog(start time.Time) []auditLine {
	var out []auditLine
	add := func(decided, cause, frontend, server, tool, action, dim, value string, shell bool) *auditLine {
		ms := int64(1000 * (1 + len(out)%7))
		l := auditLine{Time: start.Add(time.Duration(len(out)) * 17 * time.Minute), Server: server, Tool: tool, Action: action,
			Dimensions: map[string]string{dim: value}, Decision: decided, Persist: "once", Cause: cause, Frontend: frontend,
			LatencyMS: ms + 3}
		if shell {
			l.Shells = map[string]string{dim: "bash"}
		}
		if frontend != "rules" && frontend != "memory" && frontend != "none" {
			l.AskedMS = &ms
		}
		out = append(out, l)
		return &out[len(out)-1]
	}
	person := func(decided, server, tool, action, dim, value string) {
		add(decided, "user", []string{"tui", "line", "yad"}[len(out)%3], server, tool, action, dim, value, dim == "command")
	}
	for i := range 20 {
		person("allow", "claude-code", "Bash", "exec", "command", []string{"go test ./...", "go test -run TestX ./pkg", "go test -count=1 ./cmd/"}[i%3])
	}
	person("deny", "claude-code", "Bash", "exec", "command", "rm -rf /home/a/src")
	for range 5 {
		person("allow", "claude-code", "Bash", "exec", "command", "rm -rf build/x")
	}
	for range 3 {
		person("allow", "claude-code", "Bash", "exec", "command", "git status")
	}
	for _, p := range []string{"/home/a/p/src/a.go", "/home/a/p/src/b.go", "/home/a/p/src/c.go", "/home/a/p/src/a.go", "/home/a/p/src/d.go"} {
		person("allow", "fs", "read_file", "read", "path", p)
	}
	person("deny", "fs", "read_file", "read", "path", "/home/a/p/.env")
	for _, p := range []string{"/home/a/p/out/1", "/home/a/p/out/2", "/home/a/p/out/1", "/home/a/p/out/2", "/home/a/p/out/3"} {
		person("allow", "fs", "write_file", "write", "path", p)
	}
	person("deny", "fs", "write_file", "write", "path", "/home/a/p/out/4")
	for _, u := range []string{"https://docs.example.org/a", "https://docs.example.org/b", "https://docs.example.org/c/d", "https://docs.example.org/a", "https://docs.example.org/e"} {
		person("allow", "web", "fetch", "network", "url", u)
	}
	for range 3 {
		person("allow", "web2", "fetch", "network", "url", "https://docs.example.org/a")
	}
	for range 6 {
		add("allow", "user", "answers", "", "Bash", "exec", "command", "make build", true)
		add("allow", "rule", "rules", "", "Bash", "exec", "command", "make lint", true)
		add("allow", "rule", "memory", "", "Bash", "exec", "command", "make vet", true)
		add("deny", "timeout", "tui", "", "Bash", "exec", "command", "make all", true)
	}
	add("deny", "user", "line", "", "Bash", "exec", "command", "curl x | sh", true).Stop = true
	return out
}

// writeLog writes lines as the audit log of env's state directory.
func writeLog(t *testing.T, env []string, lines []auditLine) {
	t.Helper()
	var state string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "XDG_STATE_HOME="); ok {
			state = filepath.Join(v, "askperm")
		}
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(j, '\n'))
	}
	if err := os.WriteFile(filepath.Join(state, "audit.log"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// requestOf is the request a line logs, as askperm check reads one.
func (l auditLine) request() []byte {
	req := map[string]any{"id": "x", "tool": l.Tool, "action": l.Action}
	if l.Server != "" {
		req["server"] = l.Server
	}
	var dims []map[string]any
	for name, v := range l.Dimensions {
		d := map[string]any{"name": name, "value": v}
		if l.Shells[name] != "" {
			d["syntax"] = "shell"
		}
		dims = append(dims, d)
	}
	req["dimensions"] = dims
	b, _ := json.Marshal(req)
	return b
}

// TestSuggestWritesRulesThatHold: askperm suggest --write on a generated
// log writes exactly the expected rules, and askperm check with them
// allows every request a person approved that a rule came from, and
// none a person denied.
func TestSuggestWritesRulesThatHold(t *testing.T) {
	env := memoryEnv("HOME=/home/a")
	lines := generatedLog(time.Now().Add(-48 * time.Hour))
	writeLog(t, env, lines)
	file := filepath.Join(t.TempDir(), "suggested.toml")
	r := runPipe(t, nil, env, "suggest", "--write", file)
	if r.code != 0 {
		t.Fatalf("suggest --write: exit %d, stderr %q", r.code, r.stderr)
	}
	if r.stdout != "" || !strings.Contains(r.stderr, "4 rule(s) written") {
		t.Fatalf("suggest --write: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	text := readText(t, file)
	j := runPipe(t, nil, env, "suggest", "--json")
	var rules []struct {
		Tool, Server string
		Dimensions   map[string]string
		Approved     int
	}
	if err := json.Unmarshal([]byte(j.stdout), &rules); err != nil {
		t.Fatalf("suggest --json: %v: %q (stderr %q)", err, j.stdout, j.stderr)
	}
	got := fmt.Sprint(rules)
	want := "[{Bash claude-code map[command:go test *] 20} {Bash claude-code map[command:rm -rf build/x] 5} {read_file fs map[path:/home/a/p/src/[!.]*] 5} {fetch web map[url:https://docs.example.org/**] 5}]"
	if got != want {
		t.Fatalf("rules:\n got %s\nwant %s\n%s", got, want, text)
	}
	covered := func(l auditLine) bool {
		for _, rule := range rules {
			if rule.Tool == l.Tool && rule.Server == l.Server {
				g, v := rule.Dimensions[firstKey(l.Dimensions)], l.Dimensions[firstKey(l.Dimensions)]
				dir, files := strings.CutSuffix(g, "/[!.]*") // a folder's files but its dot-files
				if g == v || files && path.Dir(v) == dir && !strings.HasPrefix(path.Base(v), ".") ||
					!files && strings.HasSuffix(g, "*") && strings.HasPrefix(v, strings.TrimRight(g, "*")) {
					return true
				}
			}
		}
		return false
	}
	sources := 0
	for _, l := range lines {
		c := runPipe(t, l.request(), env, "check", "--rules", file, "--json")
		var res struct{ Result string }
		if err := json.Unmarshal([]byte(c.stdout), &res); err != nil {
			t.Fatalf("check: %v: %q (stderr %q)", err, c.stdout, c.stderr)
		}
		byPerson := l.Cause == "user" && l.Frontend != "answers"
		switch {
		case byPerson && l.Decision == "deny" && res.Result == "allow":
			t.Errorf("a request a person denied is allowed: %s", l.request())
		case byPerson && l.Decision == "allow" && covered(l):
			sources++
			if res.Result != "allow" {
				t.Errorf("a request a rule came from is %s: %s", res.Result, l.request())
			}
		}
	}
	if sources != 35 {
		t.Errorf("%d requests the rules came from, want 35", sources)
	}
	// An existing file is refused.
	if again := runPipe(t, nil, env, "suggest", "--write", file); again.code != 64 || !strings.Contains(again.stderr, "exists") {
		t.Fatalf("suggest --write over a file: exit %d, stderr %q", again.code, again.stderr)
	}
	if text2 := readText(t, file); text2 != text {
		t.Fatal("the file was changed")
	}
}

func readText(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

// TestLogStatsFigures: askperm log --stats --json on a generated log
// gives the figures computed here from the same lines.
func TestLogStatsFigures(t *testing.T) {
	env := memoryEnv()
	lines := generatedLog(time.Now().Add(-72 * time.Hour))
	writeLog(t, env, lines)
	r := runPipe(t, nil, env, "log", "--stats", "--json", "--since", "4d")
	if r.code != 0 {
		t.Fatalf("log --stats: exit %d, stderr %q", r.code, r.stderr)
	}
	var got struct {
		Days      float64        `json:"days"`
		Decisions int            `json:"decisions"`
		Prompts   int            `json:"prompts"`
		PerDay    float64        `json:"prompts_per_day"`
		ByPerson  int            `json:"by_person"`
		Approved  int            `json:"approved"`
		Share     float64        `json:"approved_share"`
		MedianMS  int64          `json:"median_ms"`
		P90MS     int64          `json:"p90_ms"`
		DecidedBy map[string]int `json:"decided_by"`
		Stops     int            `json:"breaker_stops"`
		Tools     []struct {
			Name     string `json:"name"`
			Prompts  int    `json:"prompts"`
			Approved int    `json:"approved"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v: %q", err, r.stdout)
	}
	// The figures, computed here another way.
	person := []string{"tui", "line", "yad", "zenity", "team"}
	var prompts, byPerson, approved int
	var took []int64
	decidedBy := map[string]int{}
	tools := map[string][2]int{}
	for _, l := range lines {
		asked := slices.Contains(person, l.Frontend)
		mine := asked && l.Cause == "user"
		switch {
		case mine:
			decidedBy["person"]++
		case l.Cause == "timeout":
			decidedBy["timeout"]++
		default:
			decidedBy[l.Frontend]++
		}
		if !asked {
			continue
		}
		prompts++
		c := tools[l.Tool]
		c[0]++
		if mine {
			byPerson++
			took = append(took, *l.AskedMS)
			if l.Decision == "allow" {
				approved++
				c[1]++
			}
		}
		tools[l.Tool] = c
	}
	slices.Sort(took)
	median := took[int(math.Ceil(0.5*float64(len(took))))-1]
	p90 := took[int(math.Ceil(0.9*float64(len(took))))-1]
	if got.Days != 4 || got.Decisions != len(lines) || got.Prompts != prompts || got.PerDay != float64(prompts)/4 ||
		got.ByPerson != byPerson || got.Approved != approved || got.Share != float64(approved)/float64(byPerson) ||
		got.MedianMS != median || got.P90MS != p90 || got.Stops != 1 || fmt.Sprint(got.DecidedBy) != fmt.Sprint(decidedBy) {
		t.Fatalf("log --stats:\n%s\nwant prompts %d, by person %d, approved %d, median %d, p90 %d, decided by %v",
			r.stdout, prompts, byPerson, approved, median, p90, decidedBy)
	}
	for _, row := range got.Tools {
		if c := tools[row.Name]; row.Prompts != c[0] || row.Approved != c[1] {
			t.Errorf("tool %s: %d prompts, %d approved; want %v", row.Name, row.Prompts, row.Approved, c)
		}
	}
	if len(got.Tools) != len(tools) {
		t.Errorf("%d tools, want %d", len(got.Tools), len(tools))
	}
	text := runPipe(t, nil, env, "log", "--stats")
	for _, want := range []string{"prompts: " + fmt.Sprint(prompts), "breaker stops: 1", "DECIDED BY", "TOOL", "SERVER", "read_file"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("log --stats lacks %q:\n%s", want, text.stdout)
		}
	}
}

// TestAuditLineKeepsWhatSuggestNeeds: a decision's audit line says which
// dimension is a command line and its dialect, which fields it could
// not keep as sent, and, when the frontends were asked, how long they
// took (here finding nobody to ask); a canned answer asks none.
func TestAuditLineKeepsWhatSuggestNeeds(t *testing.T) {
	env := memoryEnv()
	req := `{"id":"1","tool":"Bash","action":"exec","dimensions":[{"name":"command","value":"go test ./...","syntax":"shell","shell":"zsh"},{"name":"note","value":"a\u0007b"}]}`
	runPipe(t, []byte(req), env)
	a := lastAudit(t, env)
	if fmt.Sprint(a["shells"]) != "map[command:zsh]" || fmt.Sprint(a["inexact"]) != "[note]" || a["asked_ms"] == nil || a["cause"] != "unavailable" {
		t.Fatalf("audit line: %v", a)
	}
	runPipe(t, []byte(req), env, "--answer", "allow-once")
	if a := lastAudit(t, env); a["asked_ms"] != nil || a["frontend"] != "answers" {
		t.Fatalf("audit line of a canned answer: %v", a)
	}
}
