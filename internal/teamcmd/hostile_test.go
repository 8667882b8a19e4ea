package teamcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/wire"
)

// hostile holds what a terminal acts on or what hides text: ESC (a CSI),
// an OSC ended by BEL, a C1 CSI, bidi overrides and isolates, a
// zero-width space.
const hostile = "a\x1b[2J\x1b]0;title\x07b\u009b31mc\u202ed\u2066e\u200bf"

// rawRune is a rune that must never reach a terminal unrendered.
func rawRune(r rune) bool {
	return r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar)
}

// noRaw fails when out holds a rune a terminal would act on.
func noRaw(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range out {
		if rawRune(r) {
			t.Errorf("%s holds %U unrendered:\n%q", what, r, out)
			return
		}
	}
}

// closedURL is the URL of a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprintf("nats://%s", l.Addr())
}

// rules list --team shows the team's rules from the cache when the
// server cannot be reached; whatever text another machine put in them
// (every field of a rule's request, a value that is no rule, a key that
// is none), nothing reaches the output unrendered, and a key that is no
// rule key is said, not listed.
func TestTeamRulesListRendersHostileText(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	k := team.PublicKey(kp)
	dir := t.TempDir()
	c := team.Config{URL: closedURL(t), Host: "alpha", Prefix: team.DefaultPrefix, Approvers: []string{k}}
	config := writeFile(t, "config.toml", fmt.Sprintf("[team]\nurl = %q\nhost = \"alpha\"\napprovers = [%q]\n", c.URL, k))
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	raw := `{"server":` + q("srv"+hostile) + `,"tool":` + q("tool"+hostile) + `,"action":` + q("act"+hostile) +
		`,"workdir":{"value":` + q("/w"+hostile) + `},"grants":[{"name":` + q("g"+hostile) + `}],` +
		`"dimensions":[{"name":` + q("dim"+hostile) + `,"value":` + q("/v"+hostile) + `,"scopes":[{"label":"l","match":` + q("/m"+hostile) + `,"kind":"prefix"}]}]}`
	req, err := decision.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	f := form.New(req, form.Options{})
	a := f.Defaults()
	a.Choice = form.AllowAlways
	d, err := f.Decide(a, decision.FrontendTeam, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	id, value, err := team.SignRule(kp, []byte(raw), d, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	bad := team.RuleKey(k, strings.Repeat("0", 32))
	entries := []team.RuleEntry{
		{Key: team.RuleKey(k, id), Value: value},
		{Key: bad, Value: []byte(`{"rule":{},"approver":` + q(hostile) + `,"sig":""}`)},
		{Key: k + "." + hostile, Value: value},
	}
	if _, err := team.SaveRules(c, dir, entries, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, asJSON := range []bool{false, true} {
		args := []string{"rules", "list", "--team", "--config", config, "--state-dir", dir}
		if asJSON {
			args = append(args, "--json")
		}
		code, out, stderr := invoke(t, "", nil, args...)
		if code != cli.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		noRaw(t, "stdout", out)
		noRaw(t, "stderr", stderr)
		if !strings.Contains(out, id) || !strings.Contains(out, "in force") || !strings.Contains(out, strings.Repeat("0", 32)) || strings.Contains(out, "not a rule id") {
			t.Errorf("listed:\n%s", out)
		}
		if strings.Count(stderr, "not listed") != 1 {
			t.Errorf("the key that is none not said: %s", stderr)
		}
		if !asJSON && !strings.Contains(out, `act`+form.Line(hostile)) {
			t.Errorf("the action not shown rendered:\n%s", out)
		}
	}
}

// log --team reads lines other hosts wrote: a line with raw text in
// every field shows it rendered, in the table and in JSON, and is
// counted on stderr; a line as a host's askperm writes it (its text
// rendered already) shows unchanged.
func TestTeamLogRendersHostileLines(t *testing.T) {
	as, h := startTeam(t, 1)
	now := time.Now().UTC().Format(time.RFC3339)
	entry := map[string]any{"time": now, "latency_ms": 1,
		"dimensions": map[string]string{"dim" + hostile: "val" + hostile}, "shells": map[string]string{"dim" + hostile: "sh" + hostile},
		"inexact": []string{"in" + hostile}, "decided_by": []string{"by" + hostile}, "ignored": []string{"ig" + hostile},
		"rule": map[string]any{"scopes": map[string]string{"dim" + hostile: "m" + hostile}, "workdir_scope": "w" + hostile, "lifetime": "l" + hostile},
	}
	for _, f := range []string{"request_sha256", "id", "server", "alias", "tool", "source", "action", "session_id", "decision", "persist", "cause", "frontend", "not_remembered", "approver"} {
		entry[f] = f + hostile
	}
	b, err := json.Marshal(entry)
	if err != nil {
		t.Fatal(err)
	}
	hostileLine := string(b)
	rendered := fmt.Sprintf(`{"time":%q,"request_sha256":"x","action":%q,"decision":"deny","persist":"once","cause":"user","frontend":"team","latency_ms":1}`,
		now, `safe`+form.Line(hostile))
	for _, line := range []string{hostileLine, rendered} {
		if !json.Valid([]byte(line)) {
			t.Fatalf("not JSON: %s", line)
		}
		if err := wire.PublishAudit(context.Background(), h.Config, []byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	for _, asJSON := range []bool{false, true} {
		args := []string{"log", "--team"}
		if asJSON {
			args = append(args, "--json")
		}
		code, out, stderr := as[0].run(args...)
		if code != cli.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		noRaw(t, "stdout", out)
		noRaw(t, "stderr", stderr)
		want := "action" + form.Line(hostile)
		if asJSON {
			b, _ := json.Marshal(want)
			want = string(b)
		}
		if !strings.Contains(out, want) {
			t.Errorf("the hostile action not shown rendered (%s):\n%s", want, out)
		}
		safe := `safe` + form.Line(hostile)
		if asJSON {
			b, _ := json.Marshal(safe)
			safe = string(b)
		}
		if !strings.Contains(out, safe) {
			t.Errorf("the rendered line not shown unchanged (%s):\n%s", safe, out)
		}
		if !strings.Contains(stderr, "audit stream: 1 lines held text not rendered safe (from alpha)") {
			t.Errorf("stderr: %s", stderr)
		}
	}
}
