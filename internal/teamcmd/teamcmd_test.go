package teamcmd

import (
	"bytes"
	"strings"
	"testing"
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
		var out bytes.Buffer
		root := newRoot(strings.NewReader(""), &out)
		root.SetArgs(tc.args)
		if err := root.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) || out.Len() != 0 {
			t.Errorf("%q: %v, wrote %q; want %q", tc.args, err, out.String(), tc.want)
		}
	}
	var help bytes.Buffer
	root := newRoot(strings.NewReader(""), &help)
	root.SetOut(&help)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil || strings.Contains(help.String(), "bridge") {
		t.Errorf("help shows the bridge: %q, %v", help.String(), err)
	}
}
