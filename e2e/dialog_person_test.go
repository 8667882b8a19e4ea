package e2e

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The person's side of the dialogs: the deadline shown, Deny once shown
// once, zenity's Change… and Return, yad's labelled fields and Save rule
// without a grant.

// timeoutArg is the --timeout the dialog on screen was given, -1 if none.
func (d *xWindow) timeoutArg() int {
	for _, a := range d.cmdline() {
		if v, ok := strings.CutPrefix(a, "--timeout="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return -1
}

// yad counts askperm's deadline down in its window and ends at it in a
// deny by timeout; zenity states it in its text and gets it as its
// --timeout. Each dialog gets the time left when it opens.
func TestDialogDeadlineShown(t *testing.T) {
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		a := startDialog(t, x, prog, "write-file.json", "--timeout", "8s")
		v := a.waitDialog(prog, nil)
		if n := v.timeoutArg(); n < 7 || n > 8 {
			t.Errorf("--timeout=%d, want the 8 s left", n)
		}
		if prog == "yad" {
			v.checkArg("--timeout-indicator=bottom")
		}
		time.Sleep(1500 * time.Millisecond)
		v.keys(denyOnceKeys[prog]...)
		r := a.waitDialog(prog, v)
		if n := r.timeoutArg(); n < 1 || n > 7 {
			t.Errorf("the reason's --timeout=%d, want the time then left", n)
		}
		if prog == "zenity" && !slices.ContainsFunc(r.cmdline(), func(a string) bool {
			return strings.Contains(a, "\nAnswer by ") && strings.Contains(a, " s left); unanswered, this request is denied.")
		}) {
			t.Errorf("the reason entry does not state the deadline: %q", r.cmdline())
		}
		// Left alone, the reason entry ends at the deadline in a deny.
		wantDeny(t, a.decision(), "timeout", prog)
		r.waitGone()
	})
}

// zenity: Deny once is the viewers' Cancel, never a second button; Enter
// on the rule is « Back, never an allow; Cancel in a Change… list returns
// to the rule as it was, then Save rule saves it.
func TestDialogZenityButtons(t *testing.T) {
	needDialogs(t, "zenity")
	x := startX(t)
	a := startDialog(t, x, "zenity", "write-file.json")
	v := a.waitDialog("zenity", nil)
	v.checkArg("--cancel-label=Deny once", "--ok-label=Read again", "--extra-button=Deny always…")
	for _, arg := range v.cmdline() {
		if strings.HasSuffix(arg, "=Deny once") && arg != "--cancel-label=Deny once" {
			t.Fatalf("Deny once shown twice: %q", v.cmdline())
		}
	}
	v.keys(viewerKeys("zenity", "Allow always…")...)
	r := a.waitDialog("zenity", v)
	r.checkArg("--cancel-label=Deny once", "--ok-label=« Back")
	r.keys("Return") // « Back
	v = a.waitDialog("zenity", r)
	v.checkArg("--ok-label=Read again") // the request again
	v.keys(viewerKeys("zenity", "Allow always…")...)
	r = a.waitDialog("zenity", v)
	r.keys(append(xTabs(3), "Return")...) // Change…
	l := a.waitDialog("zenity", r)
	l.keys("Tab", "Tab", "Return") // grants: as they are
	l = a.waitDialog("zenity", l)
	l.checkArg("--cancel-label=« Rule")
	l.keys("Down", "Tab", "Return") // path: the second scope, then « Rule
	r = a.waitDialog("zenity", l)
	r.checkArg("--ok-label=« Back", "--extra-button=Save rule")
	r.keys(append(xTabs(4), "Return")...) // Save rule
	d := a.decision()
	if d["decision"] != "allow" || d["persist"] != "always" || d["cause"] != "user" ||
		!reflect.DeepEqual(d["grants"], []any{"fs.write", "fs.create"}) {
		t.Fatalf("want the rule as before Change…, allowed always; got %v", d)
	}
	rule, _ := d["rule"].(map[string]any)
	if !reflect.DeepEqual(rule["scopes"], map[string]any{"path": "/home/a/p/report.md"}) {
		t.Fatalf("rule %v, want the scope before Change…", rule)
	}

	// Deny once on the rule asks the reason, as on the request.
	a = startDialog(t, x, "zenity", "write-file.json")
	v = a.waitDialog("zenity", nil)
	v.keys(viewerKeys("zenity", "Allow always…")...)
	r = a.waitDialog("zenity", v)
	r.checkArg("--ok-label=« Back")
	r.keys("Escape") // Deny once (Cancel)
	a.zenityReason(r, "Deny once", "not like this")
	d = a.decision()
	wantDeny(t, d, "user", "zenity")
	if d["message"] != "not like this" {
		t.Fatalf("message %q", d["message"])
	}
}

// zenityReason answers zenity's reason entry for the deny named ok, shown
// after dialog v: it types why, then Return. It returns the entry.
func (a *dialogRun) zenityReason(v *xWindow, ok, why string) *xWindow {
	a.t.Helper()
	e := a.waitDialog("zenity", v)
	e.checkArg("--entry", "--ok-label="+ok, "--cancel-label=No reason")
	e.typeText(why)
	e.keys("Return")
	return e
}

// zenity: Return never decides in the request viewer. Return with Deny
// once (Cancel) focused presses OK, Read again: the request is shown
// again, with the time then left as its --timeout; Escape there is Deny
// once, which asks the reason. Deny always… is an extra button, between
// Read again and the allows; it asks the reason, then the deny rule,
// which Save rule saves.
func TestDialogZenityReturnReadsAgain(t *testing.T) {
	needDialogs(t, "zenity")
	x := startX(t)
	a := startDialog(t, x, "zenity", "write-file.json", "--timeout", "30s")
	v := a.waitDialog("zenity", nil)
	first := v.timeoutArg()
	time.Sleep(1500 * time.Millisecond)
	v.keys(viewerKeys("zenity", "Deny once")...) // Tab onto Deny once, Return
	v = a.waitDialog("zenity", v)
	v.checkArg("--text-info", "--cancel-label=Deny once", "--ok-label=Read again")
	if again := v.timeoutArg(); first < 29 || again >= first || again < first-10 {
		t.Errorf("--timeout=%d, then %d shown again; want the time then left", first, again)
	}
	v.keys("Escape") // Deny once
	a.zenityReason(v, "Deny once", "read it twice")
	d := a.decision()
	wantDeny(t, d, "user", "zenity")
	if d["message"] != "read it twice" {
		t.Fatalf("message %q", d["message"])
	}

	a = startDialog(t, x, "zenity", "write-file.json")
	v = a.waitDialog("zenity", nil)
	v.checkArg("--extra-button=Deny always…")
	v.keys(viewerKeys("zenity", "Deny always…")...)
	r := a.waitDialog("zenity", a.zenityReason(v, "Deny always…", "never"))
	r.checkArg("--cancel-label=Deny once", "--ok-label=« Back", "--extra-button=Save rule")
	r.keys(append(xTabs(4), "Return")...) // Save rule
	d = a.decision()
	if d["decision"] != "deny" || d["persist"] != "always" || d["cause"] != "user" || d["frontend"] != "zenity" || d["message"] != "never" {
		t.Fatalf("want deny always by the user through zenity, saying never; got %v", d)
	}
}

// yad's rule form labels each field with what it sets, in askperm's words
// (no request text in argv), each grant's checkbox after a read-only field
// naming the grant; Save rule without a grant says why and shows
// the form again with the person's choices; Show rule saves nothing.
func TestDialogYadRuleForm(t *testing.T) {
	needDialogs(t, "yad")
	x := startX(t)
	a := startDialog(t, x, "yad", "write-file.json")
	v := a.waitDialog("yad", nil)
	v.keys(append(xTabs(3), "Return")...) // Allow always…
	r := a.waitDialog("yad", v)
	r.checkArg("--field=Grant 1:RO", "--field=Give grant 1 (Grants):CHK", "--field=Grant 2:RO", "--field=Give grant 2 (Grants):CHK",
		"--field=Scope: what the rule covers:CB", "--field=Workdir: where the rule holds:CB",
		"--field=Lifetime: how long the rule holds:CB", "--button=Show rule:24")
	// Untick both grants, then Save rule.
	r.keys("space", "Tab", "space")
	r.keys(append(xTabs(6), "Return")...)
	r = a.waitDialog("yad", r)
	r.checkArg("--text=Not saved: the rule's first lines say why.")
	// Tick fs.write, Show rule, then Save rule.
	r.keys("space")
	r.keys(append(xTabs(6), "Return")...)
	r = a.waitDialog("yad", r)
	if slices.Contains(r.cmdline(), "--text=Not saved: the rule's first lines say why.") {
		t.Fatalf("Show rule gave a note: %q", r.cmdline())
	}
	r.keys(append(xTabs(7), "Return")...)
	d := a.decision()
	if d["decision"] != "allow" || d["persist"] != "always" || !reflect.DeepEqual(d["grants"], []any{"fs.write"}) {
		t.Fatalf("want allow always of fs.write; got %v", d)
	}
}
