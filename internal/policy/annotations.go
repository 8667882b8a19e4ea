package policy

import (
	"fmt"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/match"
)

// annotation is one [[annotations]] entry: a mode for the tools its glob
// matches.
type annotation struct {
	tool match.Glob
	mode string
}

// modes are the annotation policy's modes.
var modes = []string{"auto", "prompt", "writes", "approve"}

func (c *compiler) annotation(at annotationTOML) (annotation, error) {
	if at.Tool == "" {
		return annotation{}, fmt.Errorf("tool: missing")
	}
	p, err := c.globs.Glob(at.Tool)
	if err != nil {
		return annotation{}, fmt.Errorf("tool: %v", err)
	}
	for _, m := range modes {
		if at.Mode == m {
			return annotation{tool: p, mode: m}, nil
		}
	}
	return annotation{}, fmt.Errorf("mode: %q is none of auto, prompt, writes, approve", at.Mode)
}

// opinion is the mode's opinion of a tool with annotations a (the tool's
// own claims: nothing is allowed on them unless a mode says so). A tool
// that may reach the outside world is never taken for read-only, whatever
// else it says: what it reads there, it can send there (a fetched URL
// carries its query). As in MCP, a tool reaches it unless it says
// otherwise (openWorldHint false).
func (an annotation) opinion(a *decision.Annotations) Verdict {
	openWorld := a == nil || a.OpenWorldHint == nil || *a.OpenWorldHint
	readOnly := a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint && !openWorld
	destructive := a != nil && a.DestructiveHint != nil && *a.DestructiveHint
	switch an.mode {
	case "auto":
		if readOnly && !destructive {
			return Allow
		}
		return Prompt
	case "writes":
		if readOnly {
			return Allow
		}
		return Prompt
	case "approve":
		return Allow
	}
	return Prompt
}
