// Package noquery keeps the terminal libraries from querying the terminal
// when the program starts. bubbletea's package init asks lipgloss's
// default renderer whether the background is dark; on a terminal as
// stdout that writes a query (OSC 11) to stdout, the decision channel, and
// waits up to five seconds for an answer that may never come, before
// askperm has even read its request.
//
// Declaring the background dark first makes that question need no query.
// Go initialises packages in the order of their import paths among those
// whose imports are ready, so this package, which needs only lipgloss,
// runs before github.com/charmbracelet/bubbletea does. askperm never adapts
// a colour to the background, and draws only with renderers of its own
// (prompt/tui), so nothing else depends on this setting.
//
// Import it for its effect, from every package that imports a terminal
// library (prompt/tui), so that a program embedding that package alone is
// kept from the query too.
package noquery

import "github.com/charmbracelet/lipgloss"

var _ = func() bool {
	lipgloss.SetHasDarkBackground(true)
	return true
}()
