package line

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

// hostileGen makes hostile requests of one class. Every string it puts in a
// request passes through tint, so that two generators with the same seed
// and different tints make requests alike in all but their letters.
type hostileGen struct {
	rng  *rand.Rand
	tint func(string) string
	// text is one single-line string of the class, about n characters.
	text func(g *hostileGen, n int) string
}

// fakes are lines of askperm's, and lines that look like its layout, which
// request text tries to put at the start of a screen row.
var fakes = []string{
	"Tool: rm -rf ~",
	"Answer [y/a/d/n/m/?]: y",
	"Answered: Allow once.",
	"  y  Allow once",
	"  1. [x] any file: any value",
	"│ quoted",
	"Server: trusted",
	"Rule: allow everything, until removed",
	"askperm: approved by the administrator",
	"Key facts:",
}

// Alphabets of the classes.
var (
	asciiChars = []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_/.:[](),;'\"`$|&*?<>=+#%@!~^{}")
	wideChars  = func() []rune {
		var rs []rune
		for _, r := range [][2]rune{{0x4e00, 0x4e80}, {0xac00, 0xac80}, {0xff01, 0xff5e}} {
			for c := r[0]; c <= r[1]; c++ {
				rs = append(rs, c)
			}
		}
		return rs
	}()
)

func (g *hostileGen) pick(rs []rune) rune { return rs[g.rng.IntN(len(rs))] }

// words is n characters of random words from rs, separated by one to
// three spaces.
func (g *hostileGen) words(rs []rune, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 && g.rng.IntN(6) == 0 {
			b.WriteString(strings.Repeat(" ", 1+g.rng.IntN(3)))
			continue
		}
		b.WriteRune(g.pick(rs))
	}
	return b.String()
}

// padded is a word, padding of spaces, fill or both, and a fake line: the
// padding puts the fake at every offset of a row in turn.
func (g *hostileGen) padded(n int) string {
	pad := strings.Repeat(" ", g.rng.IntN(n+1))
	switch g.rng.IntN(3) {
	case 0:
		pad = strings.Repeat("x", g.rng.IntN(n+1))
	case 1:
		pad = strings.Repeat("ab ", g.rng.IntN(n/3+1))
	}
	return g.words(asciiChars, 1+g.rng.IntN(5)) + pad + fakes[g.rng.IntN(len(fakes))]
}

// categoryText is n characters drawn from one Unicode category: controls,
// format characters, marks, spaces and symbols included.
func (g *hostileGen) categoryText(n int) string {
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range unicode.Categories {
			if !yield(name) {
				return
			}
		}
	})
	table := unicode.Categories[names[g.rng.IntN(len(names))]]
	var rs []rune
	for _, r16 := range table.R16 {
		for c := rune(r16.Lo); c <= rune(r16.Hi) && len(rs) < 4096; c += rune(r16.Stride) {
			rs = append(rs, c)
		}
	}
	for _, r32 := range table.R32 {
		for c := rune(r32.Lo); c <= rune(r32.Hi) && len(rs) < 8192; c += rune(r32.Stride) {
			rs = append(rs, c)
		}
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		if g.rng.IntN(3) == 0 {
			b.WriteRune(g.pick(asciiChars))
			continue
		}
		b.WriteRune(g.pick(rs))
	}
	return b.String()
}

// hostileClasses are the classes of request text the layout is tested on.
var hostileClasses = []struct {
	name    string
	text    func(g *hostileGen, n int) string
	reason  int // lines of the stated reason
	details int
	dims    int
}{
	{"padded lines", func(g *hostileGen, n int) string { return g.padded(n) }, 8, 3, 3},
	{"long reasons", func(g *hostileGen, n int) string {
		if g.rng.IntN(4) == 0 {
			return g.words(asciiChars[:52], 20*n) // one long run, few spaces
		}
		return g.words(asciiChars, n)
	}, 200, 1, 1},
	{"wide characters", func(g *hostileGen, n int) string {
		return g.words(append(slices.Clone(wideChars), 'a', 'b', 'c'), n)
	}, 10, 3, 3},
	{"combining marks", func(g *hostileGen, n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteRune(g.pick(asciiChars))
			for range g.rng.IntN(4) {
				b.WriteRune(rune(0x300 + g.rng.IntN(0x70)))
			}
		}
		return b.String()
	}, 5, 2, 2},
	{"many details", func(g *hostileGen, n int) string { return g.words(asciiChars, n) }, 2, 60, 2},
	{"many dimensions and grants", func(g *hostileGen, n int) string { return g.padded(n / 2) }, 2, 2, 40},
	{"unicode categories", func(g *hostileGen, n int) string { return g.categoryText(n) }, 10, 4, 4},
}

// s is one tinted single-line string of the class.
func (g *hostileGen) s(n int) string { return g.tint(g.text(g, n)) }

// block is lines of text, some with tabs.
func (g *hostileGen) block(lines, n int) string {
	ls := make([]string, lines)
	for i := range ls {
		ls[i] = strings.Repeat("\t", g.rng.IntN(3)) + g.s(g.rng.IntN(n+1))
	}
	return strings.Join(ls, "\n")
}

// request makes a request that uses every field the prompt shows.
func (g *hostileGen) request(n, reasonLines, details, dims int) *decision.Request {
	r := &decision.Request{
		Server: g.s(n), Alias: g.s(n / 4), Tool: g.s(n), Source: g.s(n / 4),
		Action: g.s(n / 2), ActionDescription: g.s(n),
		Reason:      g.block(reasonLines, 3*n),
		Workdir:     &decision.Workdir{Value: g.s(n), Label: g.s(n / 2)},
		Annotations: &decision.Annotations{Title: g.s(n), DestructiveHint: new(true)},
	}
	for i := range dims {
		d := decision.Dimension{Name: g.tint(fmt.Sprintf("dim%d ", i)) + g.s(n/4), Label: g.s(n / 2), Value: g.s(2 * n)}
		for j := range 1 + g.rng.IntN(3) {
			d.Scopes = append(d.Scopes, decision.Scope{Label: g.s(n / 2), Match: g.tint(fmt.Sprintf("m%d ", j)) + g.s(n), Kind: decision.KindPrefix})
		}
		r.Dimensions = append(r.Dimensions, d)
	}
	for i := range dims {
		gr := decision.Grant{Name: g.tint(fmt.Sprintf("grant%d ", i)) + g.s(n/4), Description: g.s(n)}
		if i > 0 {
			gr.Implies = []string{r.Grants[0].Name}
		}
		r.Grants = append(r.Grants, gr)
	}
	for range details {
		r.Details = append(r.Details, decision.Detail{Label: g.s(n / 2), Text: g.block(1+g.rng.IntN(8), 2*n)})
	}
	args, err := json.Marshal(map[string]string{g.tint("a"): g.s(n)})
	if err != nil {
		panic(err)
	}
	r.Arguments = args
	return r
}

// rot13 tints letters, digits and the wide characters of the generators
// with a bijection that keeps every character's width and class, so that
// two requests told apart only by tint are laid out alike.
func rot13(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return 'a' + (r-'a'+13)%26
		case 'A' <= r && r <= 'Z':
			return 'A' + (r-'A'+13)%26
		case '0' <= r && r <= '9':
			return '0' + (r-'0'+5)%10
		case 0x4e00 <= r && r <= 0x4e80:
			return 0x4e00 + (r-0x4e00+1)%0x81
		case 0xac00 <= r && r <= 0xac80:
			return 0xac00 + (r-0xac00+1)%0x81
		}
		return r
	}, s)
}

func identity(s string) string { return s }

// echoed is a transcript that also gets what is typed, as a terminal in
// canonical mode echoes it, after echoMark; reads and writes come from two
// goroutines.
type echoed struct {
	mu sync.Mutex
	b  strings.Builder
}

func (e *echoed) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.b.Write(p)
}

// echoMark starts what the person typed in a transcript line: the rest of
// the line is theirs, not askperm's. The prompt never writes a NUL.
const echoMark = "\x00"

// echo writes what is read to a transcript after echoMark.
type echo struct{ out *echoed }

func (e echo) Write(p []byte) (int, error) {
	_, err := e.out.Write(append([]byte(echoMark), p...))
	return len(p), err
}

func (e *echoed) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.b.String()
}

// hostileDialogue drives a whole dialogue at width: the request, shown
// again, a denial reason, an invalid key, every rule question, and deny
// once at the end. It returns the transcript's lines.
func hostileDialogue(t *testing.T, req *decision.Request, width int) []string {
	t.Helper()
	f := form.New(req, form.Options{})
	a := f.Defaults()
	a.Choice = form.AllowAlways
	answers := []string{"?", "m", "a reason the person typed", "x", "a"}
	for range f.RuleQuestions(a) {
		answers = append(answers, "")
	}
	var out echoed
	p := newLinePrompt(io.TeeReader(lineTyped(append(answers, "n")...), echo{&out}), &out, 0)
	p.cols = func() int { return width }
	got, err := p.run(t.Context(), f)
	if err != nil || got.Choice != form.DenyOnce {
		t.Fatalf("width %d: got %v, %v; want deny once; transcript:\n%s", width, got.Choice, err, out.String())
	}
	return strings.Split(out.String(), "\n")
}

// askpermAtTwo is what askperm starts at column 2: a key of the legend or a
// numbered option.
var askpermAtTwo = regexp.MustCompile(`^  (\S  [A-Z]|\d+\. \[[x ]\] )`)

// checkLayout checks the lines of one transcript (plain) against the same
// dialogue on a request tinted apart (tinted): every line fits the width;
// column 0 holds askperm's words, the gutter or indentation; whatever
// starts a line before the hanging indent is askperm's (the tinted
// transcript has the same there); runs of spaces are counted.
func checkLayout(t *testing.T, plain, tinted []string, width int) {
	t.Helper()
	if len(plain) != len(tinted) {
		t.Fatalf("width %d: the tinted request took %d lines, the plain one %d", width, len(tinted), len(plain))
	}
	for i, l := range plain {
		l, _, _ = strings.Cut(l, echoMark)
		tinted[i], _, _ = strings.Cut(tinted[i], echoMark)
		fail := func(why string) {
			t.Helper()
			t.Fatalf("width %d, line %d: %s:\n%q\nlines around it:\n%s", width, i+1, why, l, strings.Join(plain[max(0, i-5):min(len(plain), i+3)], "\n"))
		}
		if w := ansi.StringWidth(l); w > width {
			fail(fmt.Sprintf("%d cells wide", w))
		}
		if ansi.StringWidth(tinted[i]) != ansi.StringWidth(l) {
			fail("the tinted line differs in width: the oracle is broken")
		}
		body, isGutter := strings.CutPrefix(l, gutter)
		if isGutter {
			if strings.Contains(body, strings.Repeat(" ", minSpaceRun)) {
				fail("a run of spaces is not counted")
			}
			continue
		}
		if r := []rune(l + " ")[0]; r != ' ' && !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			fail("request text at column 0")
		}
		text := strings.TrimLeft(l, " ")
		if indent := len(l) - len(text); indent < hangIndent && text != "" {
			if []rune(text)[0] != []rune(strings.TrimLeft(tinted[i], " "))[0] {
				fail(fmt.Sprintf("request text at column %d", indent))
			}
			if indent == 2 && !askpermAtTwo.MatchString(l) {
				fail("column 2 holds something else than a key or an option")
			}
		}
		if strings.Contains(strings.TrimRight(text, " "), strings.Repeat(" ", minSpaceRun)) {
			fail("a run of spaces is not counted")
		}
	}
}

// TestLineHostileLayout: for each class of hostile request, at narrow,
// common and odd widths, no line is wider than the terminal, request text
// never starts a line, and the facts stand right above every "Answer".
func TestLineHostileLayout(t *testing.T) {
	widths := []int{minColumns, minColumns + 1, 33, 61, 79, 80, 81, 132}
	for ci, class := range hostileClasses {
		t.Run(class.name, func(t *testing.T) {
			for i, width := range widths {
				seed := uint64(ci*1000 + i)
				gen := func(tint func(string) string) *decision.Request {
					g := &hostileGen{rng: rand.New(rand.NewPCG(seed, 1)), tint: tint, text: class.text}
					return g.request(width+width/2, class.reason, class.details, class.dims)
				}
				plain := gen(identity)
				lines := hostileDialogue(t, plain, width)
				checkLayout(t, lines, hostileDialogue(t, gen(rot13), width), width)
				checkFactsAbove(t, plain, lines)
			}
		})
	}
}

// squeeze is s without spaces, line breaks and space counts: what wrapping
// keeps.
func squeeze(s string) string {
	return strings.NewReplacer(" ", "", "\n", "").Replace(spaceCount().ReplaceAllString(s, ""))
}

// choiceQuestion starts the question of stage "choice", wrapped or not.
var choiceQuestion = regexp.MustCompile(`^Answer( \[|$)`)

// checkFactsAbove: right above every "Answer [" question stand the facts
// heading and the facts, and nothing else: each fact's text, spaces aside,
// in order, and no line of the agent's words.
func checkFactsAbove(t *testing.T, r *decision.Request, lines []string) {
	t.Helper()
	want := []string{"Tool: " + form.Line(r.Tool), "Action: " + form.Line(r.Action)}
	if r.Server != "" {
		want = slices.Insert(want, 0, "Server: "+form.Line(r.Server))
	}
	for _, d := range r.Dimensions {
		want = append(want, "Value of "+form.DimensionLabel(d)+": "+form.Line(d.Value))
	}
	if r.Workdir != nil {
		want = append(want, "Workdir: "+form.Line(r.Workdir.Value))
	}
	for _, g := range r.Grants {
		want = append(want, form.Line(g.Name))
	}
	questions := 0
	for i, l := range lines {
		if !choiceQuestion.MatchString(l) {
			continue
		}
		questions++
		start := i - 1
		for start >= 0 && lines[start] != factsHeading {
			if strings.HasPrefix(lines[start], gutter) || strings.Contains(lines[start], "agent's words") {
				t.Fatalf("line %d, between the facts and the question: %q", start+1, lines[start])
			}
			start--
		}
		if start < 0 {
			t.Fatalf("no %q above the question on line %d", factsHeading, i+1)
		}
		block := squeeze(strings.Join(lines[start+1:i], "\n"))
		for _, w := range want {
			j := strings.Index(block, squeeze(w))
			if j < 0 {
				t.Fatalf("the facts above the question on line %d lack %q (in order):\n%s", i+1, w, strings.Join(lines[start:i+1], "\n"))
			}
			block = block[j+len(squeeze(w)):]
		}
	}
	if questions < 4 {
		t.Fatalf("asked %d times, want 4 (first, after ?, after m, after an invalid key)", questions)
	}
}

// TestLineWrapLine: whatever the text and width, lines fit, continuations
// start with the indent, nothing is lost or reordered, and a ⟨N spaces⟩
// count that fits a line stays whole.
func TestLineWrapLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	alphabets := [][]rune{asciiChars, wideChars, append(slices.Clone(wideChars), 'a', 'é', ' '), []rune("a\u0301b\u0308 ")}
	for i := range 3000 {
		g := &hostileGen{rng: rng, tint: identity}
		text := g.words(alphabets[i%len(alphabets)], rng.IntN(300))
		if i%3 == 0 {
			text = countSpaces(strings.Repeat(" ", rng.IntN(40)) + text + strings.Repeat(" ", rng.IntN(12)) + "x")
		}
		width := minColumns + rng.IntN(100)
		indent := []int{0, hangIndent, 9}[i%3]
		lines := wrapLine(text, width, indent)
		for j, l := range lines {
			if w := ansi.StringWidth(l); w > width {
				t.Fatalf("width %d: line %d is %d cells: %q (text %q)", width, j, w, l, text)
			}
			if j > 0 && !strings.HasPrefix(l, strings.Repeat(" ", indent)) {
				t.Fatalf("continuation without the indent: %q", l)
			}
			if c := strings.Count(l, "⟨"); c != strings.Count(l, "⟩") {
				t.Fatalf("a space count split across lines: %q", l)
			}
		}
		if got := squeeze(strings.Join(lines, "")); got != squeeze(text) {
			t.Fatalf("width %d: text changed:\n got %q\nwant %q", width, got, squeeze(text))
		}
	}
}

// TestCountSpaces: runs of minSpaceRun spaces and more are counted, shorter
// ones stay.
func TestCountSpaces(t *testing.T) {
	for n := range 12 {
		in := "a" + strings.Repeat(" ", n) + "b"
		want := in
		if n >= minSpaceRun {
			want = fmt.Sprintf("a⟨%d spaces⟩b", n)
		}
		if got := countSpaces(in); got != want {
			t.Errorf("countSpaces(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkLineRequestView lays out a request of the largest details (ten
// of 65,536 characters, spaces few and far between) at 80 columns.
func BenchmarkLineRequestView(b *testing.B) {
	g := &hostileGen{rng: rand.New(rand.NewPCG(1, 1)), tint: identity}
	req := lineReq()
	req.Details = nil
	for range 10 {
		req.Details = append(req.Details, decision.Detail{Label: "d", Text: g.words(append(slices.Clone(wideChars), asciiChars...), form.PreviewChars)})
	}
	f := form.New(req, form.Options{})
	for b.Loop() {
		pg := &page{width: 80}
		pg.request(f)
	}
}
