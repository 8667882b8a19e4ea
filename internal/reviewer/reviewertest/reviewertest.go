// Package reviewertest makes the test binary a fake reviewer program, so
// that tests can name reviewers that allow, deny, abstain, hang, crash
// or answer wrongly. Tests only.
package reviewertest

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
)

// arg marks a run of the test binary as a fake reviewer.
const arg = "askperm-fake-reviewer"

// Main runs the fake reviewer when the test binary was started as one,
// else the tests m.
func Main(m *testing.M) {
	Fake()
	os.Exit(m.Run())
}

// Fake answers as a fake reviewer and exits when the test binary was
// started as one (by Command); otherwise it returns. A TestMain that
// does more than Main calls it first.
func Fake() {
	if len(os.Args) > 4 && os.Args[1] == arg {
		os.Exit(fake(os.Args[2], os.Args[3], os.Args[4], os.Args[5:]))
	}
}

// Command is the command of a fake reviewer answering as mode says,
// which first appends name and a newline to the file log (when not ""):
//
//	allow         allow once
//	deny MESSAGE  deny once with MESSAGE
//	abstain       exit 3, nothing on stdout
//	hang          start a child that holds stdout, and wait forever
//	crash         "boom" on stderr, exit 2
//	garbage       a line that is no decision
//	other         a valid decision for another request
//	always        allow always (a rule), which no reviewer may give
//	random SEED   a random decision, for the request or another, or
//	              random bytes, and a random exit status
func Command(log, name, mode string, args ...string) []string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return append([]string{exe, arg, log, name, mode}, args...)
}

// Asked are the names the fake reviewers appended to log, in order.
func Asked(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func fake(log, name, mode string, args []string) int {
	if log != "" {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return 70
		}
		fmt.Fprintln(f, name)
		f.Close()
	}
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		return 70
	}
	req, err := decision.Parse(raw)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake reviewer:", err)
		return 70
	}
	d := decision.Denied(req, decision.CauseReviewer, decision.FrontendReviewer)
	switch mode {
	case "allow":
		d.Decision, d.Grants = decision.Allow, req.GrantNames()
	case "deny":
		d.Message = strings.Join(args, " ")
	case "abstain":
		fmt.Fprintln(os.Stderr, "not sure")
		return 3
	case "hang":
		child := exec.Command("sleep", "3600")
		child.Stdout = os.Stdout
		if child.Start() == nil {
			fmt.Fprintln(os.Stderr, "child", child.Process.Pid)
		}
		time.Sleep(time.Hour)
	case "crash":
		fmt.Fprintln(os.Stderr, "boom")
		return 2
	case "garbage":
		fmt.Println("allow")
		return 0
	case "other":
		d.RequestSHA256 = strings.Repeat("0", 64)
	case "random":
		seed, _ := strconv.ParseUint(args[0], 10, 64)
		rng := rand.New(rand.NewPCG(seed, seed))
		out, code := randomAnswer(rng, req)
		os.Stdout.WriteString(out)
		return code
	case "always":
		d.Decision, d.Grants, d.Cause = decision.Allow, req.GrantNames(), decision.CauseUser
		d.Persist = decision.PersistAlways
		d.Rule = &decision.Rule{Scopes: map[string]string{}, Lifetime: decision.LifetimeIndefinite}
		if req.Workdir != nil {
			d.Rule.WorkdirScope = decision.WorkdirSelected
		}
	}
	os.Stdout.Write(decision.Encode(d))
	return 0
}

// randomAnswer is a decision for req, or for another request, with
// random fields, or random bytes; and an exit status.
func randomAnswer(rng *rand.Rand, req *decision.Request) (string, int) {
	code := []int{0, 0, 0, 1, 3}[rng.IntN(5)]
	if rng.IntN(5) == 0 {
		return string([]byte{byte(rng.IntN(256)), '{', byte(rng.IntN(256)), '\n'}), code
	}
	d := decision.Denied(req, []decision.Cause{decision.CauseUser, decision.CauseRule, decision.CauseReviewer, decision.CauseSession, decision.CauseTimeout}[rng.IntN(5)],
		[]decision.Frontend{decision.FrontendTUI, decision.FrontendReviewer, decision.FrontendNone}[rng.IntN(3)])
	if rng.IntN(2) == 0 {
		d.Decision = decision.Allow
	} else {
		d.Message = "m"
	}
	d.Persist = []string{decision.PersistOnce, decision.PersistOnce, decision.PersistSession, decision.PersistAlways}[rng.IntN(4)]
	if d.Persist == decision.PersistAlways {
		d.Rule = &decision.Rule{Scopes: map[string]string{}, Lifetime: decision.LifetimeIndefinite}
	}
	d.Stop = rng.IntN(4) == 0
	if rng.IntN(4) == 0 {
		d.RequestSHA256 = strings.Repeat("a", 64)
	}
	return string(decision.Encode(d)), code
}
