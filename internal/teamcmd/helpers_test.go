package teamcmd

import (
	"testing"

	"github.com/askperm/askperm/internal/cli/clitest"
)

// invoke runs askperm-team's command line in this process with req on
// stdin, and returns the exit status, stdout and stderr.
func invoke(t *testing.T, req string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Invoke(t, run, req, env, args...)
}

var writeFile = clitest.WriteFile
