package teamcmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/askperm/askperm/internal/cli"
)

// The bridge is hidden, takes no arguments, and reads its request on
// stdin: none is an error, and nothing on stdout.
func TestBridgeCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bridge", "x"}, "unknown command"},
		{[]string{"bridge"}, "the request: EOF"},
	} {
		code, out, stderr := invoke(t, "", nil, tc.args...)
		if code == cli.ExitOK || !strings.Contains(stderr, tc.want) || out != "" {
			t.Errorf("%q: exit %d, %s, wrote %q; want %q", tc.args, code, stderr, out, tc.want)
		}
	}
	var help bytes.Buffer
	root := newRoot(cli.Streams{})
	root.SetOut(&help)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil || strings.Contains(help.String(), "bridge") {
		t.Errorf("help shows the bridge: %q, %v", help.String(), err)
	}
}
