package pipeline

import (
	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

// Commands are the simple commands of req's command lines as a form
// lists them, with nothing decided by a rule: what an approver on
// another machine, who has none of this machine's rules, is shown.
func Commands(req *decision.Request) map[string][]form.Command { return formCommands(req, nil) }
