package webinbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	cdpwebauthn "github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/team"
)

// chrome is a headless Chromium tab with a virtual passkey
// authenticator (user verification on, an internal transport, CTAP2);
// the test is skipped, saying why, where Chromium cannot start.
func chrome(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no Chromium on PATH (Debian: apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Skipf("Chromium cannot start: %v", err)
	}
	if _, err := chromedp.Call(ctx, cdpwebauthn.Enable, cdpwebauthn.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdpwebauthn.AddVirtualAuthenticator, cdpwebauthn.AddVirtualAuthenticatorParams{
		Options: &cdpwebauthn.VirtualAuthenticatorOptions{
			Protocol: cdpwebauthn.AuthenticatorProtocolCtap2, Transport: cdpwebauthn.AuthenticatorTransportInternal,
			HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
		}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancelRun := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelRun)
	return ctx
}

// do runs the steps, failing the test on an error.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// visit opens url and waits for sel on it. The list reloads itself on
// every change, and a reload may abort a navigation begun meanwhile: a
// navigation that did not land is begun again, three times at most.
func visit(t *testing.T, ctx context.Context, url, sel string) {
	t.Helper()
	var err error
	for range 3 {
		wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err = chromedp.Do(wctx, chromedp.Navigate(url), chromedp.WaitReady(sel))
		cancel()
		if err == nil {
			return
		}
	}
	t.Fatalf("%s: %v", url, err)
}

// eval is the value of a JavaScript expression (a promise awaited).
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitText waits until the element sel's text holds want.
func waitText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, want)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || document.body).textContent`, sel)))
		t.Fatalf("%s never said %q: %v; it says %q", sel, want, err, text)
	}
}

// armed waits until the page shows its allow buttons armed.
func armed(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, "arming", chromedp.WaitReady(`body[data-page=request]`), chromedp.WaitNotPresent(`button[data-allow][aria-disabled]`))
}

// screenshot writes the viewport to docs/name when ASKPERM_UPDATE_DOCS=1.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("ASKPERM_UPDATE_DOCS") != "1" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "docs", name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// withFields is the request write-file.json with its fields changed.
func withFields(t *testing.T, change func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(request(t, "write-file.json"), &m); err != nil {
		t.Fatal(err)
	}
	change(m)
	raw, _ := json.Marshal(m)
	return raw
}

func TestBrowser(t *testing.T) {
	e := newEnv(t, 300*time.Millisecond)
	ctx := chrome(t)
	origin := e.srv.Origin

	// Pair: the one-time link registers a passkey and logs in.
	do(t, ctx, "pairing", chromedp.Navigate(origin+e.pair), chromedp.Click(`#register`), chromedp.WaitReady(`body[data-page=list]`))
	if len(e.srv.keys.Credentials) != 1 {
		t.Fatalf("passkeys registered: %d", len(e.srv.keys.Credentials))
	}
	e.mu.Lock()
	if len(e.registered) != 1 || !bytes.Equal(e.registered[0], e.srv.keys.Credentials[0].ID) {
		t.Errorf("the registration was not told: %x", e.registered)
	}
	e.mu.Unlock()
	if fi, err := os.Stat(e.srv.keysPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the passkeys file: %v %v", fi, err)
	}
	do(t, ctx, "the link again", chromedp.Navigate(origin+e.pair))
	waitText(t, ctx, "body", "not valid, was used or has expired")

	// A request arrives: the list shows it live.
	do(t, ctx, "the list", chromedp.Navigate(origin+"/"), chromedp.WaitReady(`#empty`))
	req, id := e.publish(request(t, "write-file.json"), "allow")
	e.publish(request(t, "run-command.json"), "command")
	do(t, ctx, "the request listed", chromedp.WaitReady(`a[href="/r/`+id+`"]`))
	waitText(t, ctx, "main", "write_file (fs-default) wants to write /home/a/p/report.md")
	screenshot(t, ctx, "web-list.png")
	do(t, ctx, "away from the list", chromedp.Navigate("about:blank"))

	t.Run("allow with the passkey", func(t *testing.T) {
		visit(t, ctx, origin+"/r/"+id, `#question`)
		armed(t, ctx)
		do(t, ctx, "allow", chromedp.Click(`button[value=allow-once]`))
		waitText(t, ctx, "#result", "Answered: ")
		if d := e.host.Answer(req, e.approver); d.Decision != decision.Allow || d.Persist != decision.PersistOnce {
			t.Errorf("answer %+v", d)
		}
	})

	t.Run("an allow inside the arming delay", func(t *testing.T) {
		early, earlyID := e.publish(request(t, "write-file.json"), "early")
		e.srv.mu.Lock()
		e.srv.ArmDelay = time.Hour
		e.srv.mu.Unlock()
		defer func() {
			e.srv.mu.Lock()
			e.srv.ArmDelay = 300 * time.Millisecond
			e.srv.mu.Unlock()
		}()
		visit(t, ctx, origin+"/r/"+earlyID, `#question`)
		do(t, ctx, "allow", chromedp.Click(`button[value=allow-once]`))
		waitText(t, ctx, "#arming", "not yet counted: an allow counts only 3600000 ms after the question was fully visible")
		e.noAnswer(early)
	})

	t.Run("deny with a message", func(t *testing.T) {
		deny, denyID := e.publish(request(t, "write-file.json"), "deny")
		visit(t, ctx, origin+"/r/"+denyID, `#question`)
		do(t, ctx, "deny", chromedp.SendKeys(`input[name=message]`, "not on Fridays"), chromedp.Click(`button[value=deny-once]`),
			chromedp.WaitReady(`body[data-page=done]`))
		waitText(t, ctx, "#result", "Answered: ")
		if d := e.host.Answer(deny, e.approver); d.Decision != decision.Deny || d.Message != "not on Fridays" {
			t.Errorf("answer %+v", d)
		}
	})

	t.Run("the rule stage", func(t *testing.T) {
		always, alwaysID := e.publish(request(t, "write-file.json"), "always")
		visit(t, ctx, origin+"/r/"+alwaysID, `#question`)
		do(t, ctx, "stage rule", chromedp.Click(`button[value=allow-always]`), chromedp.WaitReady(`form[action$="/rule"]`),
			chromedp.Click(`button[name=back]`), chromedp.WaitReady(`form[action$="/choice"]`),
			chromedp.Click(`button[value=allow-always]`), chromedp.WaitReady(`form[action$="/rule"]`),
			chromedp.Click(`input[name=q1][value="/home/a/p/"]`), chromedp.Click(`input[name=q2][value=all]`),
			chromedp.Click(`input[name=q3][value="900"]`))
		armed(t, ctx)
		do(t, ctx, "save", chromedp.Click(`button[name=save]`))
		waitText(t, ctx, "#result", "Answered: ")
		d := e.host.Answer(always, e.approver)
		if d.Decision != decision.Allow || d.Rule == nil || d.Rule.Scopes["path"] != "/home/a/p/" || d.Rule.WorkdirScope != "all" || d.Rule.Lifetime != "900" {
			t.Errorf("answer %+v", d)
		}
	})

	t.Run("a request answered elsewhere", func(t *testing.T) {
		gone, goneID := e.publish(request(t, "write-file.json"), "gone")
		visit(t, ctx, origin+"/r/"+goneID, `#question`)
		e.host.Done(gone, team.Done{Outcome: "deny", Frontend: decision.FrontendTeam, Cause: decision.CauseTimeout})
		waitText(t, ctx, "#gone", "This request is no longer pending")
		if n := eval[int](t, ctx, `document.querySelectorAll("#answer button:not([disabled])").length`); n != 0 {
			t.Errorf("%d buttons still on", n)
		}
		visit(t, ctx, origin+"/", `body[data-page=list]`)
		if eval[bool](t, ctx, fmt.Sprintf(`!!document.querySelector('a[href="/r/%s"]')`, goneID)) {
			t.Error("the list still shows it")
		}
		do(t, ctx, "away from the list", chromedp.Navigate("about:blank"))
	})

	t.Run("forged posts", func(t *testing.T) {
		one, oneID := e.publish(request(t, "write-file.json"), "forged-one")
		_, twoID := e.publish(request(t, "write-file.json"), "forged-two")
		visit(t, ctx, origin+"/r/"+oneID, `#question`)
		post := func(path, fields string) int {
			return eval[int](t, ctx, fmt.Sprintf(`fetch(%q, {method: "POST", body: new URLSearchParams(%s)}).then((r) => r.status)`, path, fields))
		}
		csrf := eval[string](t, ctx, `document.querySelector("input[name=csrf]").value`)
		for name, tc := range map[string]struct {
			path, fields string
			code         int
		}{
			"no CSRF token": {"/r/" + oneID + "/choice", fmt.Sprintf(`{id: %q, digest: %q, choice: "deny-once"}`, oneID, one.SHA256), 403},
			"another request's id": {"/r/" + twoID + "/choice",
				fmt.Sprintf(`{csrf: %q, id: %q, digest: %q, choice: "deny-once"}`, csrf, oneID, one.SHA256), 409},
			"an allow without the passkey": {"/r/" + oneID + "/choice",
				fmt.Sprintf(`{csrf: %q, id: %q, digest: %q, choice: "allow-once"}`, csrf, oneID, one.SHA256), 422},
			"an assertion never asked for": {"/r/" + oneID + "/allow/finish",
				fmt.Sprintf(`{csrf: %q, id: %q, digest: %q, credential: "{}"}`, csrf, oneID, one.SHA256), 403},
		} {
			if code := post(tc.path, tc.fields); code != tc.code {
				t.Errorf("%s: %d, want %d", name, code, tc.code)
			}
		}
		// The cookie of a session this server does not know, as another
		// approver's server would have set it.
		if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: e.srv.cookie, Value: "another approver's", URL: origin, HTTPOnly: new(true)}); err != nil {
			t.Fatal(err)
		}
		if code := post("/r/"+oneID+"/choice", fmt.Sprintf(`{csrf: %q, id: %q, digest: %q, choice: "deny-once"}`, csrf, oneID, one.SHA256)); code != 401 {
			t.Errorf("another session's cookie: %d", code)
		}
		e.noAnswer(one)
	})

	t.Run("log in with the passkey", func(t *testing.T) {
		if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
		visit(t, ctx, origin+"/", `body[data-page=login]`)
		do(t, ctx, "login", chromedp.Click(`#login`), chromedp.WaitReady(`body[data-page=list]`))
		do(t, ctx, "away from the list", chromedp.Navigate("about:blank"))
	})

	t.Run("hostile text", func(t *testing.T) {
		hostile := `<script>window.pwned=1</script><img src=x onerror="window.pwned=1"><b>bold</b>` + "\u202eexe.txt\u2066\u200b\u3164"
		_, hid := e.publish(withFields(t, func(m map[string]any) {
			m["reason"], m["tool"] = hostile, "write_file<i>x</i>"
			m["dimensions"].([]any)[0].(map[string]any)["value"] = "/tmp/" + hostile
		}), "hostile")
		visit(t, ctx, origin+"/r/"+hid, `#question`)
		if eval[bool](t, ctx, `window.pwned !== undefined`) {
			t.Error("the request's script ran")
		}
		if n := eval[int](t, ctx, `document.querySelectorAll("main img, main b, main i, main script, header i").length`); n != 0 {
			t.Errorf("%d elements from the request's markup", n)
		}
		text := eval[string](t, ctx, `document.body.textContent`)
		for _, want := range []string{`<script>window.pwned=1</script>`, `onerror="window.pwned=1"`, `\u{202e}`, `\u{2066}`, `\u{200b}`, `\u{3164}`, "write_file<i>x</i>"} {
			if !strings.Contains(text, want) {
				t.Errorf("the page's text lacks %q", want)
			}
		}
		for _, c := range []string{"\u202e", "\u2066", "\u200b", "\u3164"} {
			if strings.Contains(text, c) {
				t.Errorf("%q reached the page's text unescaped", c)
			}
		}
	})

	t.Run("a phone's viewport", func(t *testing.T) {
		long := "/home/a/p/" + strings.Repeat("averyveryverylongdirectoryname", 8) + "/report.md"
		_, pid := e.publish(withFields(t, func(m map[string]any) {
			m["dimensions"].([]any)[0].(map[string]any)["value"] = long
		}), "phone")
		do(t, ctx, "a phone", chromedp.EmulateViewport(360, 740))
		visit(t, ctx, origin+"/r/"+pid, `#question`)
		armed(t, ctx)
		if !eval[bool](t, ctx, `document.scrollingElement.scrollWidth <= innerWidth`) {
			t.Errorf("the page scrolls sideways: %d > 360", eval[int](t, ctx, `document.scrollingElement.scrollWidth`))
		}
		if n := eval[int](t, ctx, `Array.from(document.querySelectorAll("#facts dt, #facts dd")).filter((x) => x.getBoundingClientRect().right > innerWidth || x.getBoundingClientRect().width === 0).length`); n != 0 {
			t.Errorf("%d facts not within the viewport", n)
		}
		if !strings.Contains(eval[string](t, ctx, `document.querySelector("#facts").textContent`), "averyveryverylongdirectoryname") {
			t.Error("the long value is not among the facts")
		}
		visit(t, ctx, origin+"/r/"+id2(e, t), `#question`)
		armed(t, ctx)
		screenshot(t, ctx, "web-form.png")
		visit(t, ctx, origin+"/", `body[data-page=list]`)
		if !eval[bool](t, ctx, `document.scrollingElement.scrollWidth <= innerWidth`) {
			t.Error("the list scrolls sideways")
		}
	})
}

// id2 is the page id of the run-command request of TestBrowser, a form
// with a command line to show.
func id2(e *env, t *testing.T) string {
	t.Helper()
	for _, en := range e.srv.Team.List.Pending() {
		if en.Request.Tool == "run_command" {
			return ID(en)
		}
	}
	t.Fatal("the run_command request is not pending")
	return ""
}
