// Package elicit bridges MCP elicitation to a permission helper: an MCP
// client (of the official Go SDK) that installs Handler answers a server's
// permission elicitation through a helpers.Runner, and passes any other
// elicitation to its own handler. It lives apart from package helpers so
// that a Runner alone links nothing of the MCP SDK.
package elicit

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/helpers"
)

// MetaKey marks a permission elicitation: the elicitation's _meta holds
// the askperm request (protocol section 2) under this key.
const MetaKey = "askperm/request"

// Handler is an MCP client's elicitation handler (for
// mcp.ClientOptions.ElicitationHandler, of the official Go SDK): a
// permission elicitation, one whose _meta holds MetaKey, is asked through
// r and answered in the flat native form; any other goes to other (nil:
// declined). A client that cancels the elicitation cancels the helper,
// and the answer is cancel.
//
// The native form is one flat object: "choice" (allow-once, deny-once,
// allow-always, deny-always, allow-session); "message" (a deny's reason);
// "grants" (the granted names, comma-separated); "scope_NAME" for each
// dimension of an always-rule (the chosen match); "workdir_scope" and
// "lifetime" (protocol section 3). Whatever went wrong is deny-once with
// the reason as its message: a permission asked of askperm is never
// declined on askperm's behalf.
func Handler(r *helpers.Runner, other func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		raw, ok := req.Params.Meta[MetaKey]
		if !ok {
			if other == nil {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return other(ctx, req)
		}
		var d decision.Decision
		b, err := json.Marshal(raw)
		if err == nil {
			var sent *decision.Request
			if sent, err = decision.Parse(b); err == nil {
				d, err = r.Ask(ctx, sent)
			}
		}
		if ctx.Err() != nil {
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
		if err != nil && d.Decision == "" {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"choice": "deny-once", "message": err.Error()}}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: nativeForm(d)}, nil
	}
}

// nativeForm is decision d in the flat native form.
func nativeForm(d decision.Decision) map[string]any {
	persist := map[string]string{decision.PersistOnce: "once", decision.PersistAlways: "always", decision.PersistSession: "session"}[d.Persist]
	c := map[string]any{"choice": d.Decision + "-" + persist}
	if d.Message != "" {
		c["message"] = d.Message
	}
	if len(d.Grants) > 0 {
		c["grants"] = strings.Join(d.Grants, ",")
	}
	if d.Rule != nil {
		for name, match := range d.Rule.Scopes {
			c["scope_"+name] = match
		}
		if d.Rule.WorkdirScope != "" {
			c["workdir_scope"] = d.Rule.WorkdirScope
		}
		c["lifetime"] = d.Rule.Lifetime
	}
	return c
}
