package gate

import (
	"path/filepath"
	"slices"
	"strings"
)

// runners are programs that run the script or package their first
// operand names: the server is that operand, not the runner.
var runners = []string{"node", "nodejs", "bun", "bunx", "deno", "npx", "pnpx", "python", "python3", "uv", "uvx", "pipx", "ruby", "perl", "php", "java", "go", "sh", "bash"}

// DefaultName is the server's name when none is configured, from the
// command line the person configured (never from what the server says of
// itself): the program's base name, and for a runner (node, python3, npx,
// uvx, …) a space and its first argument that is not a flag (nor a "run"
// subcommand), as written. `npx -y @modelcontextprotocol/server-filesystem
// /p` is "npx @modelcontextprotocol/server-filesystem"; `python3 -m
// mcp_server_git` is "python3 mcp_server_git"; `/opt/bin/mcp-fs /p` is
// "mcp-fs".
func DefaultName(command []string) string {
	if len(command) == 0 {
		return ""
	}
	program := filepath.Base(command[0])
	if !slices.Contains(runners, program) {
		return program
	}
	for i, arg := range command[1:] {
		if strings.HasPrefix(arg, "-") || i == 0 && arg == "run" {
			continue
		}
		return program + " " + arg
	}
	return program
}
