package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The docs' examples, run: every fenced block of README.md and docs/*.md
// says by its info string what it is, and the test does with it what a
// reader would.
//
//	toml      loaded by askperm: a rules file by `askperm check --rules`
//	          (its examples checked), canned answers by --answers, else a
//	          config file by --config; a first line "# file: NAME" names
//	          the file for the page's console blocks; "toml refused" is
//	          an example of a mistake, which askperm must refuse (exit 64)
//	json      parsed; a request (it has "tool") is accepted by `askperm
//	          digest`; in an agent's configuration, every askperm command
//	          line is one askperm takes
//	console   run: each "$ " line by sh in a temporary directory holding
//	          the page's files and testdata/, with the built askperm first
//	          on PATH; the lines up to the next "$ " are its output
//	          (stdout and stderr), and it must exit 0
//	text      a screen, a diagram or output shown: never run
//
// Any other block says "norun" in its info string (```sh norun): shown,
// not run. A block without an info string fails the test.
func TestDocsExamples(t *testing.T) {
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"../README.md"}, pages...)
	for _, page := range pages {
		t.Run(filepath.Base(page), func(t *testing.T) {
			t.Parallel()
			runPage(t, page)
		})
	}
}

// block is one fenced block of a page.
type block struct {
	info, body string
	line       int
}

var fence = regexp.MustCompile("^( *)(```+)(.*)$")

// blocks returns the fenced blocks of a Markdown file, indented ones (in
// list items) included, their indentation taken off.
func blocks(t *testing.T, page string) []block {
	t.Helper()
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []block
	var cur *block
	indent := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if cur == nil {
			if m := fence.FindStringSubmatch(l); m != nil {
				cur, indent = &block{info: strings.TrimSpace(m[3]), line: n}, m[1]
			}
			continue
		}
		if strings.TrimSpace(l) == "```" {
			out = append(out, *cur)
			cur = nil
			continue
		}
		cur.body += strings.TrimPrefix(l, indent) + "\n"
	}
	if cur != nil {
		t.Fatalf("%s:%d: a block that never ends", page, cur.line)
	}
	return out
}

func runPage(t *testing.T, page string) {
	dir := t.TempDir()
	abs, err := filepath.Abs("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	all := blocks(t, page)
	// Files first: a console block may use a file named further down.
	for i, b := range all {
		if b.info != "toml" && b.info != "toml refused" {
			continue
		}
		name := fmt.Sprintf("block%d.toml", i)
		if first, _, _ := strings.Cut(b.body, "\n"); strings.HasPrefix(first, "# file: ") {
			name = strings.TrimPrefix(first, "# file: ")
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.body), 0o600); err != nil {
			t.Fatal(err)
		}
		all[i].info = strings.Replace(b.info, "toml", "toml "+name, 1)
	}
	for _, b := range all {
		where := fmt.Sprintf("%s:%d", filepath.Base(page), b.line)
		kind := strings.Fields(b.info + " ")
		switch {
		case b.info == "":
			t.Errorf("%s: a block without an info string: say what it is (toml, json, console, text, or LANG norun)", where)
		case strings.Contains(b.info, "norun") || kind[0] == "text":
		case kind[0] == "toml":
			checkTOML(t, where, dir, kind[1], b.body, len(kind) > 2 && kind[2] == "refused")
		case kind[0] == "json":
			checkJSON(t, where, dir, b.body)
		case kind[0] == "console":
			runConsole(t, where, dir, b.body)
		default:
			t.Errorf("%s: a %q block is neither run nor marked norun", where, b.info)
		}
	}
}

// docsRun runs a shell command line in dir with askperm first on PATH and
// a home of dir's own, and returns its output and exit status.
func docsRun(t *testing.T, dir, line, stdin string) (string, int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = []string{"PATH=" + filepath.Dir(bin) + ":" + os.Getenv("PATH"), "LANG=C.UTF-8", "HOME=" + dir,
		"XDG_CONFIG_HOME=" + dir + "/config", "XDG_STATE_HOME=" + dir + "/state"}
	out, err := cmd.CombinedOutput()
	return string(out), exitCode(t, err)
}

func checkTOML(t *testing.T, where, dir, name, body string, refused bool) {
	var line string
	switch {
	case strings.Contains(body, "[[answer]]"):
		line = "askperm --answers " + name + " --strict --frontend none < testdata/requests/minimal.json >/dev/null; s=$?; [ $s = 0 ] || [ $s = 69 ]"
	case strings.Contains(body, "[[rule]]") || strings.Contains(body, "[verbs]") || strings.Contains(body, "[[annotations]]"):
		line = "askperm check --rules " + name + " < testdata/requests/minimal.json >/dev/null"
	default:
		line = "askperm check --config " + name + " < testdata/requests/minimal.json >/dev/null"
	}
	out, code := docsRun(t, dir, line, "")
	switch {
	case refused && code != 64:
		t.Errorf("%s: %s, an example of a mistake, is not refused (exit %d): %s", where, name, code, out)
	case !refused && code != 0:
		t.Errorf("%s: %s does not load (exit %d): %s", where, name, code, out)
	}
}

func checkJSON(t *testing.T, where, dir, body string) {
	var v map[string]any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Errorf("%s: not a JSON object: %v", where, err)
		return
	}
	if _, ok := v["tool"]; ok {
		if out, code := docsRun(t, dir, "askperm digest", body); code != 0 {
			t.Errorf("%s: askperm refuses the request (exit %d): %s", where, code, out)
		}
	}
	// An agent's configuration: each askperm command line it starts must
	// be one askperm takes (its flags parsed, its --help shown).
	// cobra shows a parent's help for an unknown subcommand, so the usage
	// line must name the command itself.
	for _, argv := range askpermCommands(v) {
		path := argv
		if i := slices.IndexFunc(argv, func(a string) bool { return strings.HasPrefix(a, "-") }); i >= 0 {
			path = argv[:i]
		}
		out, err := exec.Command(bin, append(argv, "--help")...).CombinedOutput()
		if usage := "Usage:\n  " + strings.Join(append([]string{"askperm"}, path...), " ") + " "; err != nil || !strings.Contains(string(out), usage) {
			t.Errorf("%s: askperm %s is not a command askperm takes (%v): %s", where, strings.Join(argv, " "), err, out)
		}
	}
}

// askpermCommands finds the askperm command lines in an agent's
// configuration: {"command": "askperm hook codex"}, or {"command":
// "askperm", "args": [...]} (up to a "--", after which comes the server's
// own command).
func askpermCommands(v any) [][]string {
	var out [][]string
	switch v := v.(type) {
	case map[string]any:
		if c, ok := v["command"].(string); ok && (c == "askperm" || strings.HasPrefix(c, "askperm ")) {
			argv := strings.Fields(c)[1:]
			if args, ok := v["args"].([]any); ok {
				for _, a := range args {
					if a == "--" {
						break
					}
					argv = append(argv, fmt.Sprint(a))
				}
			}
			out = append(out, argv)
		}
		for _, e := range v {
			out = append(out, askpermCommands(e)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, askpermCommands(e)...)
		}
	}
	return out
}

func runConsole(t *testing.T, where, dir, body string) {
	var cmds []string
	var want []string
	for _, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			cmds, want = append(cmds, c), append(want, "")
			continue
		}
		if len(cmds) == 0 {
			t.Errorf("%s: a console block must start with a \"$ \" line", where)
			return
		}
		want[len(want)-1] += l + "\n"
	}
	for i, c := range cmds {
		out, code := docsRun(t, dir, c, "")
		if code != 0 {
			t.Errorf("%s: $ %s: exit %d: %s", where, c, code, out)
			continue
		}
		if got, w := strings.TrimRight(out, "\n"), strings.TrimRight(want[i], "\n"); got != w {
			t.Errorf("%s: $ %s\ngot:\n%s\nwant:\n%s", where, c, got, w)
		}
	}
}

// TestDocsLinks: every relative link of the docs reaches a file, and its
// #anchor a heading of that file (GitHub's anchors).
func TestDocsLinks(t *testing.T) {
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"../README.md", "../BENCHMARKS.md"}, pages...)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			content, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s: link %s: %v", filepath.Base(page), target, err)
				continue
			}
			if anchor != "" && !anchors(string(content))[anchor] {
				t.Errorf("%s: link %s: no heading with that anchor in %s", filepath.Base(page), target, file)
			}
		}
	}
}

// anchors are the anchors GitHub gives a Markdown text's headings:
// lower case, punctuation dropped, spaces as hyphens.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	inFence := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

// TestDocsEveryFlag: every flag of every command askperm has is named in
// README.md or docs/, so moving text between pages loses none.
func TestDocsEveryFlag(t *testing.T) {
	var all strings.Builder
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(pages, "../README.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	docs := all.String()
	flag := regexp.MustCompile(`(?m)^\s+(?:-\w, )?(--[a-z][a-z0-9-]*)`)
	seen := map[string]bool{}
	var walk func(cmd []string)
	walk = func(cmd []string) {
		out, err := exec.Command(bin, append(cmd, "--help")...).Output()
		if err != nil {
			t.Fatalf("askperm %v --help: %v", cmd, err)
		}
		help := string(out)
		for _, m := range flag.FindAllStringSubmatch(help, -1) {
			if f := m[1]; f != "--help" && !seen[f] {
				seen[f] = true
				if !regexp.MustCompile(`(^|[^\w-])` + f + `([^\w-]|$)`).MatchString(docs) {
					t.Errorf("askperm %s: flag %s is in no docs page", strings.Join(cmd, " "), f)
				}
			}
		}
		_, sub, ok := strings.Cut(help, "Available Commands:\n")
		if !ok {
			return
		}
		sub, _, _ = strings.Cut(sub, "\n\n")
		for _, l := range strings.Split(sub, "\n") {
			if name := strings.Fields(l); len(name) > 0 && name[0] != "help" && name[0] != "completion" {
				walk(append(append([]string(nil), cmd...), name[0]))
			}
		}
	}
	walk(nil)
	// A help layout the pattern no longer reads would check no flag.
	if !seen["--timeout"] || !seen["--rules"] {
		t.Fatalf("the help's flags were not found (%d read): its layout changed", len(seen))
	}
}

// TestREADMESetUp: the README stays short, and its two set-up commands
// stay the ones that work: the sample request the screenshot shows, and
// the test command .ci/run runs.
func TestREADMESetUp(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 250 {
		t.Errorf("README.md has %d lines; keep it to 250 and move the rest to docs/", n)
	}
	var setUp string
	for _, bl := range blocks(t, "../README.md") {
		if strings.Contains(bl.body, "scripts/test.sh") {
			setUp = bl.body
		}
	}
	var cmds []string
	for _, l := range strings.Split(setUp, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			cmds = append(cmds, l)
		}
	}
	if want := []string{"go run . < testdata/requests/write-file.json", "scripts/test.sh"}; !slices.Equal(cmds, want) {
		t.Fatalf("the README's set-up commands are %q, want %q", cmds, want)
	}
	if _, err := os.Stat("../testdata/requests/write-file.json"); err != nil {
		t.Error(err)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(ci)), "\n")
	if last := lines[len(lines)-1]; last != "scripts/test.sh" {
		t.Errorf(".ci/run ends with %q, not the README's test command scripts/test.sh", last)
	}
}
