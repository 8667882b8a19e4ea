package helpers_test

import (
	"context"
	"fmt"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/helpers"
)

// A helper that fails is a deny, with the reason as its message.
func ExampleRunner_Ask() {
	r := &helpers.Runner{Argv: []string{"/bin/sh", "-c", "cat >/dev/null; exit 3"}, Timeout: time.Minute}
	d, err := r.Ask(context.Background(), &decision.Request{Tool: "write_file", Action: "write"})
	fmt.Println(d.Decision, d.Cause, d.Frontend)
	fmt.Println(err)
	// Output:
	// deny error none
	// helpers: the helper failed: exit status 3
}

// Anything but one valid decision for the request sent is a deny: here a
// decision that answers another request.
func ExampleRunner_Ask_mismatch() {
	forged := `{"version":1,"decision":"allow","persist":"once","cause":"user","frontend":"tui","request_sha256":"` +
		"0000000000000000000000000000000000000000000000000000000000000000" + `"}`
	r := &helpers.Runner{Argv: []string{"/bin/sh", "-c", "cat >/dev/null; echo '" + forged + "'"}}
	d, _ := r.Ask(context.Background(), &decision.Request{Action: "exec"})
	fmt.Println(d.Decision)
	// Output:
	// deny
}
