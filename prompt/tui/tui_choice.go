package tui

import (
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"

	"github.com/askperm/askperm/form"
)

// choiceStage asks stage "choice": the offered choices with a's choice
// focused (deny once unless Back brought another), then, for a deny, the
// optional reason, prefilled with what was typed before a Back.
//
// Both questions are huh fields, a Select and an Input, driven here
// rather than by a huh.Form, so that huh's key map never sees a key the
// stage did not choose to pass on: the Select gets only the arrows that
// move it without wrapping around, the Input only text, Backspace and the
// cursor keys. Enter, Tab and Shift+Tab are the stage's own. The Select's
// key map binds only the arrows besides, so that even a key passed by
// mistake could not jump, filter or confirm.
type choiceStage struct {
	st            tuiStyles
	f             *form.Form
	a             *form.Answer
	choices       []form.Choice
	choice        form.Choice // the Select's value: the choice under its cursor
	reason        string      // the Input's value
	pick          huh.Field   // the Select of choices
	text          huh.Field   // the Input of the reason
	reasonFocused bool        // the reason has the focus
	err           string
	changed       time.Time // when the focus last moved to another choice

	// The question as last drawn, at drawnWidth; nil: stale. Every
	// change to the fields makes it stale. A frame measures the question
	// and then draws it, and bubbletea renders a frame after every
	// message: huh draws the fields only when they changed.
	drawn      []string
	drawnWidth int
}

// choiceKeys are the letters that choose, as in the line prompt.
var choiceKeys = map[rune]form.Choice{
	'y': form.AllowOnce,
	's': form.AllowSession,
	'a': form.AllowAlways,
	'n': form.DenyOnce,
	'd': form.DenyAlways,
}

// choiceKey is the letter that chooses c.
func choiceKey(c form.Choice) rune {
	for r, ch := range choiceKeys {
		if ch == c {
			return r
		}
	}
	return 0
}

// selectKeys is the Select's key map: Up and Down move, nothing else acts.
var selectKeys = &huh.KeyMap{Select: huh.SelectKeyMap{
	Up:   key.NewBinding(key.WithKeys("up")),
	Down: key.NewBinding(key.WithKeys("down")),
}}

func newChoiceStage(st tuiStyles, f *form.Form, a *form.Answer) *choiceStage {
	c := &choiceStage{st: st, f: f, a: a, choices: f.Choices(), choice: a.Choice, reason: a.Message}
	if !slices.Contains(c.choices, c.choice) {
		c.choice = form.DenyOnce
	}
	opts := make([]huh.Option[form.Choice], len(c.choices))
	for i, ch := range c.choices {
		opts[i] = huh.NewOption(form.ChoiceLabel(ch)+" ("+string(choiceKey(ch))+")", ch)
	}
	// The theme comes first: a field without one draws with huh's default
	// theme, on lipgloss's default renderer.
	pick := huh.NewSelect[form.Choice]()
	pick.WithTheme(st.theme)
	pick.WithKeyMap(selectKeys)
	c.pick = pick.Title("Your decision").Options(opts...).Value(&c.choice)
	text := huh.NewInput()
	text.WithTheme(st.theme)
	c.text = text.Title("Denial reason (optional)").
		Description("Enter to go on, Shift+Tab to change the decision.").
		CharLimit(form.MaxMessageBytes).
		Value(&c.reason)
	c.pick.Focus()
	return c
}

func (c *choiceStage) key(p press) verdict {
	c.err = ""
	k := p.KeyMsg
	if c.reasonFocused {
		if c.typeKey(k) {
			return keyDone
		}
		return keyActed
	}
	last := len(c.choices) - 1
	switch ch, ok := choiceKeys[letter(k)]; {
	case k.Type == tea.KeyUp || k.Type == tea.KeyDown:
		c.moveTo(slices.Index(c.choices, c.choice)+arrow(k), p)
	case k.Type == tea.KeyHome || k.Type == tea.KeyEnd:
		to := 0
		if k.Type == tea.KeyEnd {
			to = last
		}
		if c.choices[to].IsAllow() { // Home: the allows come first
			c.typed(jumpIgnored)
			return keyIgnored
		}
		c.moveTo(to, p)
	case k.Type == tea.KeyEnter && c.choice.IsAllow():
		if p.soon(c.changed) {
			c.err = enterTooSoon
			return keyIgnored
		}
		if c.answer(c.a.Message) {
			return keyDone
		}
	case k.Type == tea.KeyEnter:
		c.focusReason(true)
	case k.Type == tea.KeyTab: // on to the reason; never confirms an allow
		if !c.choice.IsAllow() {
			c.focusReason(true)
		}
	case ok && slices.Contains(c.choices, ch): // calm: the screen saw to it
		c.moveTo(slices.Index(c.choices, ch), p)
	case printable(k):
		c.typed(typingIgnored)
		return keyIgnored
	}
	return keyActed
}

// moveTo moves the Select's cursor to choice i, one arrow at a time (the
// Select moves only so), unless i is past either end: the list does not
// wrap around.
func (c *choiceStage) moveTo(i int, p press) {
	from := slices.Index(c.choices, c.choice)
	if i < 0 || i >= len(c.choices) || i == from {
		return
	}
	c.drawn = nil
	k := tea.KeyMsg{Type: tea.KeyDown}
	if i < from {
		k.Type = tea.KeyUp
	}
	for range len(c.choices) {
		if slices.Index(c.choices, c.choice) == i {
			break
		}
		c.pick.Update(k)
	}
	c.changed = p.at
}

// typed puts the focus back on Deny once, saying why: typing went on.
func (c *choiceStage) typed(why string) {
	if !c.reasonFocused { // else the choice is a deny already
		c.moveTo(slices.Index(c.choices, form.DenyOnce), press{})
	}
	c.err = why + "; the choice is back on Deny once"
}

func (c *choiceStage) typing() bool { return c.reasonFocused }

func (c *choiceStage) typeKey(k tea.KeyMsg) bool {
	c.drawn = nil
	switch k.Type {
	case tea.KeyRunes, tea.KeySpace:
		if text := typed(k); len(text) > 0 {
			c.text.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: text, Paste: true})
		}
	case tea.KeyBackspace, tea.KeyLeft, tea.KeyRight, tea.KeyHome, tea.KeyEnd:
		c.text.Update(tea.KeyMsg{Type: k.Type})
	case tea.KeyShiftTab:
		c.focusReason(false)
	case tea.KeyEnter:
		return c.answer(c.reason)
	}
	return false
}

// typed is the text a key types, as the Input gets it: marked as pasted,
// so that no text ("home", "ctrl+a", "ctrl+v") can pass for a key the
// Input binds, and without the characters askperm's renderer would
// escape as hidden, which the Input would draw as they are. The Input
// itself drops controls and U+FFFD and turns tabs and line breaks into
// spaces.
func typed(k tea.KeyMsg) []rune {
	if k.Type == tea.KeySpace {
		return []rune{' '}
	}
	text := make([]rune, 0, len(k.Runes))
	for _, r := range k.Runes {
		if !form.Hidden(string(r)) {
			text = append(text, r)
		}
	}
	return text
}

func (c *choiceStage) focusReason(on bool) {
	c.drawn = nil
	c.reasonFocused = on
	if on {
		c.pick.Blur()
		c.text.Focus()
		return
	}
	c.text.Blur()
	c.pick.Focus()
}

// answer validates the chosen choice with message and keeps it in a.
func (c *choiceStage) answer(message string) bool {
	ans := *c.a
	ans.Choice, ans.Message = c.choice, message
	if err := c.f.CheckChoice(ans); err != nil {
		c.err = err.Error()
		return false
	}
	*c.a = ans
	return true
}

func (c *choiceStage) note(int) []string { return nil }

func (c *choiceStage) view(width, _ int) []string {
	if c.drawn != nil && c.drawnWidth == width {
		return c.drawn
	}
	if !c.reasonFocused {
		c.drawn = c.show(c.pick, width)
	} else {
		lines := hanging("  Chosen: "+form.ChoiceLabel(c.choice), width)
		c.drawn = append(lines, c.show(c.text, width)...)
	}
	c.drawnWidth = width
	return c.drawn
}

// show draws f at width. The field's width leaves out its border, which
// lipgloss draws outside it. A huh field works its layout out for a new
// width (the Select's height, the Input's scrolled text) on its next
// message: resizeMsg is one that does nothing else.
func (c *choiceStage) show(f huh.Field, width int) []string {
	f.WithWidth(width - c.st.theme.Focused.Base.GetHorizontalBorderSize())
	f.Update(resizeMsg{})
	return strings.Split(f.View(), "\n")
}

type resizeMsg struct{}

func (c *choiceStage) minRows(width int) int { return len(c.view(width, 0)) }

func (c *choiceStage) problem() string { return c.err }

func (c *choiceStage) legend() string {
	if c.reasonFocused {
		return "type a reason · enter: confirm · shift+tab: back · esc: cancel"
	}
	return "up/down or the letter, one key at a time: choose · enter: confirm · pgup/pgdn: scroll · v: words in full · esc: cancel"
}
