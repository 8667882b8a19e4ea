package inbox

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/team/wire"
)

func key(k tea.KeyType) tea.KeyMsg { return tea.KeyMsg{Type: k} }

func TestScreenCursorStaysOnItsRequest(t *testing.T) {
	l := NewList()
	var ps []wire.Pending
	for i, id := range []string{"a", "b", "c"} {
		ps = append(ps, pending(t, "alpha", id, time.Hour))
		l.Add(ps[i], t0.Add(time.Duration(i)*time.Second), t0)
	}
	m := &listModel{list: l, now: func() time.Time { return t0 }, warning: func() string { return "" }}
	m.refresh()
	if got := *m.rows[m.cursor].Request.ID; got != "c" {
		t.Fatalf("the cursor starts on %s, want the newest, c", got)
	}
	m.Update(key(tea.KeyUp))
	// A newer request arrives: the cursor stays on b.
	l.Add(pending(t, "alpha", "d", time.Hour), t0.Add(time.Minute), t0)
	m.Update(changedMsg{})
	if got := *m.rows[m.cursor].Request.ID; got != "b" || len(m.rows) != 4 {
		t.Fatalf("after d arrived the cursor is on %s of %d", got, len(m.rows))
	}
	// b leaves: the cursor stays where it was, on the next one.
	l.Done("alpha", ps[1].Ask, t0)
	m.Update(changedMsg{})
	if got := *m.rows[m.cursor].Request.ID; got != "c" {
		t.Fatalf("after b left the cursor is on %s, want c", got)
	}
	_, cmd := m.Update(key(tea.KeyEnter))
	if m.chosen == nil || *m.chosen.Request.ID != "c" || cmd == nil {
		t.Fatalf("Enter chose %v", m.chosen)
	}
	if !strings.Contains(m.View(), "askperm inbox: 3 pending") {
		t.Errorf("view:\n%s", m.View())
	}
}

func TestScreenEnterOnAnEmptyListOpensNothing(t *testing.T) {
	m := &listModel{list: NewList(), now: func() time.Time { return t0 }, warning: func() string { return "" }}
	m.refresh()
	if _, cmd := m.Update(key(tea.KeyEnter)); m.chosen != nil || cmd != nil {
		t.Fatal("Enter on an empty list did something")
	}
	if _, cmd := m.Update(key(tea.KeyEsc)); !m.quit || cmd == nil {
		t.Fatal("Esc does not quit")
	}
}

// hostileRune is a rune a terminal could act on or that hides text.
func hostileRune(r rune) bool {
	return unicode.IsControl(r) || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200b || r == 0xfeff
}

// TestRowRendersHostileText: whatever the request's text holds, a row
// of the list (the question, the session) carries no character that a
// terminal acts on or that hides or reorders text.
func TestRowRendersHostileText(t *testing.T) {
	alphabet := []rune("ab /.\x1b\x07\r\n\t\u202e\u2066\u200b\ufeff\u009b[31m;é漢")
	text := func(rng *rand.Rand) string {
		var b strings.Builder
		for range 1 + rng.IntN(30) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	listed := 0
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 2))
		m := map[string]any{"id": "x", "tool": "shell", "server": text(rng), "action": "exec", "session_id": text(rng),
			"dimensions": []any{map[string]any{"name": "command", "value": text(rng)}}}
		raw, _ := json.Marshal(m)
		req, err := decision.Parse(raw)
		if err != nil {
			continue // not a request: never listed
		}
		l := NewList()
		l.Add(wire.Pending{Host: "alpha", Ask: req.SHA256[:32], Digest: req.SHA256, Raw: raw, Request: req, Deadline: t0.Add(time.Hour)}, t0, t0)
		listed++
		for _, cell := range Row(l.Pending()[0], t0) {
			if i := strings.IndexFunc(cell, hostileRune); i >= 0 {
				t.Fatalf("seed %d: cell %q holds %U", seed, cell, []rune(cell[i:])[0])
			}
		}
	}
	if listed < 200 {
		t.Fatalf("only %d of 300 generated requests were valid: the test tries too little", listed)
	}
}

// hostileText holds what a terminal acts on or what hides text: ESC (a
// CSI), an OSC ended by BEL, a C1 CSI, bidi overrides and isolates.
const hostileText = "a\x1b[2J\x1b]0;title\x07b\u009b31mc\u202ed\u2066e\u200bf"

// The list's warning line, which may quote what a host sent, reaches the
// terminal rendered: nothing in it that a terminal acts on.
func TestScreenWarningRendered(t *testing.T) {
	m := &listModel{list: NewList(), now: func() time.Time { return t0 }, warning: func() string { return "request on x: " + hostileText }}
	m.width, m.height = 400, 10
	m.refresh()
	view := m.View()
	for _, r := range view {
		if r != '\n' && hostileRune(r) {
			t.Fatalf("the view holds %U:\n%q", r, view)
		}
	}
	if !strings.Contains(view, `warning: request on x: a\e[2J\e]0;title\x07b`) {
		t.Errorf("the warning is not shown rendered:\n%q", view)
	}
}
