package reviewer_test

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/reviewer"
	"github.com/askperm/askperm/internal/reviewer/reviewertest"
)

func TestMain(m *testing.M) { reviewertest.Main(m) }

// warnings collects what a chain says.
type warnings []string

func (w *warnings) warn(m string) { *w = append(*w, m) }

func request(t *testing.T, raw string) *decision.Request {
	t.Helper()
	req, err := decision.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func ptr(s string) *string { return &s }

// Each way a reviewer can answer, alone and before a second reviewer that
// allows: a decision decides, once, as the reviewer's; every other answer
// abstains, with a warning unless it is a plain abstention, and the next
// reviewer is asked.
func TestChain(t *testing.T) {
	const raw = `{"id":"r1","tool":"read_file","action":"read","session_id":"s","grants":[{"name":"fs.read"}]}`
	for _, tc := range []struct {
		mode     string
		args     []string
		decision string // "": abstains
		message  string
		warning  string // a warning the chain must give; "": none
	}{
		{mode: "allow", decision: "allow"},
		{mode: "deny", args: []string{"not", "today"}, decision: "deny", message: "not today"},
		// A script's message reaches the agent cleaned: no control or
		// format character (ESC, U+202E), spaces folded.
		{mode: "deny", args: []string{"a\x1b[31m\n\u202eb", " c"}, decision: "deny", message: "a[31m b c"},
		{mode: "abstain"},
		{mode: "hang", warning: "did not answer in time"},
		{mode: "crash", warning: "boom"},
		{mode: "garbage", warning: "the helper's answer"},
		{mode: "other", warning: "is not the sent request's digest"},
		{mode: "always", warning: "a reviewer decides once only"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "asked")
			req := request(t, raw)
			for _, next := range []bool{false, true} {
				specs := []reviewer.Spec{{Name: "first", Command: reviewertest.Command(log, "first", tc.mode, tc.args...), Timeout: 300 * time.Millisecond}}
				if next {
					specs = append(specs, reviewer.Spec{Name: "second", Command: reviewertest.Command(log, "second", "deny", "second")})
				}
				c, err := reviewer.New(specs)
				if err != nil {
					t.Fatal(err)
				}
				var w warnings
				v := c.Review(context.Background(), req, w.warn, false)
				want := tc.decision
				if want == "" && next {
					want = "deny"
				}
				switch {
				case want == "" && v.Decision != nil:
					t.Fatalf("next %v: decided %+v", next, v.Decision)
				case want == "":
				case v.Decision == nil:
					t.Fatalf("next %v: no decision; warnings %q", next, w)
				default:
					d := *v.Decision
					if d.Decision != want || d.Persist != "once" || d.Cause != decision.CauseReviewer || d.Frontend != decision.FrontendReviewer ||
						d.RequestSHA256 != req.SHA256 || d.ID == nil || *d.ID != "r1" {
						t.Errorf("next %v: got %+v", next, d)
					}
					if want == "allow" && !slices.Equal(d.Grants, []string{"fs.read"}) || want == "deny" && d.Grants != nil {
						t.Errorf("next %v: grants %q", next, d.Grants)
					}
					if _, err := decision.ParseDecision(decision.Encode(d), req); err != nil {
						t.Errorf("next %v: the decision is invalid: %v", next, err)
					}
				}
				if by := map[bool]string{false: "first", true: "second"}[tc.decision == "" && next]; v.Decision != nil && v.By != by {
					t.Errorf("next %v: decided by %q, want %q", next, v.By, by)
				}
				if tc.mode == "deny" && v.Decision.Message != tc.message {
					t.Errorf("message %q", v.Decision.Message)
				}
				joined := strings.Join(w, "\n")
				if tc.warning == "" && joined != "" || tc.warning != "" && (len(w) != 1 || !strings.Contains(joined, tc.warning) || !strings.Contains(joined, "first")) {
					t.Errorf("next %v: warnings %q, want one with %q", next, w, tc.warning)
				}
				if tc.mode == "hang" {
					groupKilled(t, joined)
				}
			}
			wantAsked := []string{"first", "first"}
			if tc.decision == "" {
				wantAsked = append(wantAsked, "second")
			}
			if got := reviewertest.Asked(t, log); !slices.Equal(got, wantAsked) {
				t.Errorf("asked %q, want %q", got, wantAsked)
			}
		})
	}
}

// groupKilled checks that the child a hanging reviewer started (its pid
// in the warning) did not outlive it.
func groupKilled(t *testing.T, warning string) {
	t.Helper()
	m := regexp.MustCompile(`child (\d+)`).FindStringSubmatch(warning)
	if m == nil {
		t.Fatalf("no child pid in %q", warning)
	}
	pid, _ := strconv.Atoi(m[1])
	for range 100 {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(20 * time.Millisecond) // the child's reaping is asynchronous
	}
	t.Errorf("the reviewer's child %d outlived it", pid)
}

// --verbose says who decided and who abstained, with what it said.
func TestChainVerbose(t *testing.T) {
	c, _ := reviewer.New([]reviewer.Spec{
		{Name: "a", Command: reviewertest.Command("", "a", "abstain")},
		{Name: "b", Command: reviewertest.Command("", "b", "allow")},
	})
	var w warnings
	c.Review(context.Background(), request(t, `{"action":"read"}`), w.warn, true)
	if want := []string{"reviewer a abstained: not sure", "allow by reviewer b"}; !slices.Equal(w, want) {
		t.Errorf("got %q, want %q", w, want)
	}
}

// A reviewer sees only the requests its globs match; a glob on a field
// the request lacks never matches.
func TestChainScope(t *testing.T) {
	c, err := reviewer.New([]reviewer.Spec{
		{Name: "reads", Command: []string{"/bin/false"}, Tool: ptr("read_*")},
		{Name: "fs", Command: []string{"/bin/false"}, Server: ptr("fs"), Action: ptr("write")},
		{Name: "all", Command: []string{"/bin/false"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string][]string{
		`{"tool":"read_file","action":"read"}`:                 {"reads", "all"},
		`{"tool":"write_file","server":"fs","action":"write"}`: {"fs", "all"},
		`{"tool":"write_file","action":"write"}`:               {"all"},
		`{"action":"read"}`:                                    {"all"},
	} {
		if got := c.For(request(t, raw)); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
	if _, err := reviewer.New([]reviewer.Spec{{Name: "bad", Command: []string{"/bin/false"}, Tool: ptr("[")}}); err == nil || !strings.Contains(err.Error(), `reviewer "bad": tool:`) {
		t.Errorf("a bad glob: %v", err)
	}
	var none *reviewer.Chain
	if none.For(request(t, `{"action":"read"}`)) != nil {
		t.Error("no chain names reviewers")
	}
}

// Whatever a reviewer writes (random decisions for the request or
// another, random bytes, any exit status), the chain either abstains or
// returns a once-only decision by the reviewer for the request: never
// another persist, cause, digest, rule or stop.
func TestChainNeverMore(t *testing.T) {
	req := request(t, `{"action":"read","session_id":"s","persistent":true}`)
	decided := 0
	for seed := range 60 {
		c, _ := reviewer.New([]reviewer.Spec{{Name: "r", Command: reviewertest.Command("", "r", "random", strconv.Itoa(seed))}})
		v := c.Review(context.Background(), req, func(string) {}, false)
		if v.Decision == nil {
			continue
		}
		decided++
		d := v.Decision
		if d.Persist != "once" || d.Cause != decision.CauseReviewer || d.Frontend != decision.FrontendReviewer || d.RequestSHA256 != req.SHA256 || d.Rule != nil || d.Stop {
			t.Fatalf("seed %d gave %+v", seed, d)
		}
	}
	if decided == 0 || decided == 60 {
		t.Errorf("%d of 60 random answers decided: the generator misses a class", decided)
	}
}
