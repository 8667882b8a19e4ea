package team

import (
	"time"

	"github.com/askperm/askperm/decision"
)

// ReachTimeout bounds reaching the server: past it, team mode is
// unavailable and the next frontend is asked.
const ReachTimeout = 2 * time.Second

// MaxRequest caps a request the team is asked: NATS's default largest
// message. A larger request is unavailable to the team.
const MaxRequest = 1 << 20

// Done is how a request ended, written by its host to the done bucket.
type Done struct {
	Outcome  string            `json:"outcome"` // allow or deny
	Frontend decision.Frontend `json:"frontend"`
	Approver string            `json:"approver"` // the answer's approver; "" when none decided
	Cause    decision.Cause    `json:"cause"`
}

// The bridge is askperm-team's hidden `bridge` command, the host side's
// transport: askperm runs it for each request the team frontend asks, so
// that the NATS client is linked into askperm-team alone. It is trusted
// to carry, never to decide: askperm verifies every answer it passes on.
//
// askperm writes one BridgeStart line on the bridge's stdin; the bridge
// connects, binds, publishes, and writes BridgeEvent lines on its stdout:
// Unavailable (and it ends) or Published, then one Answer line per answer
// it sees. When the request ends, askperm writes one Done line; the
// bridge records it in the done bucket and ends. Its stdin closed without
// a Done line, it ends without recording.

// BridgeStart is what askperm tells the bridge about a request.
type BridgeStart struct {
	Config Config `json:"config"`
	// Request is the request as sent (its digest is Digest).
	Request []byte `json:"request"`
	Digest  string `json:"digest"`
	// Ask is this asking's id (NewAsk): answers are keyed and signed for it.
	Ask      string `json:"ask"`
	Deadline int64  `json:"deadline"` // Unix milliseconds
}

// BridgeEvent is a line the bridge writes: one of its fields is set.
type BridgeEvent struct {
	// Unavailable says why the request could not be published.
	Unavailable string `json:"unavailable,omitzero"`
	// Published says the request is on the request stream.
	Published bool `json:"published,omitzero"`
	// Key and Value are an answer key and its value, unchecked.
	Key   string `json:"key,omitzero"`
	Value []byte `json:"value,omitzero"`
}
