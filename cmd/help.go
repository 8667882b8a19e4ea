package cmd

// The help texts: what askperm is, its exit statuses and its files, and
// an example for every command. They are also the man pages (docs/man,
// made by TestManPages on go generate), so each is plain text that reads as Markdown
// too: the tables are indented four spaces.

const rootLong = `askperm stands between an AI agent and a person. Before a risky tool call
runs, the agent's MCP server, hook or script starts askperm and writes one
JSON permission request on its stdin; askperm asks a person (a terminal UI,
a line prompt or a desktop dialog) or answers from canned answers, and
writes one JSON decision, on one line, on stdout. It fails closed: a
caller must treat anything but exit 0 with one valid decision whose
request_sha256 and id match as a deny. Diagnostics go to stderr, one line
each, prefixed "askperm:".

Exit status:

    0    a decision was written (allow or deny)
    1    --exit-status only: a deny (by a person, a rule, or no frontend)
    2    askperm hook only: the agent's call is blocked (any failure)
    64   usage error: bad flags, stdin is a terminal, an unreadable, unsafe
         or invalid rules, answers or config file, a canned answer the
         form rejects
    65   invalid request: parse, size (--max-request), UTF-8, schema,
         limits, or not fully read before the deadline or a signal
    69   --strict and no canned answer matches; askperm inbox answer: the
         request is not pending (unknown, ended, expired, answered by you)
    70   internal failure (a deny with cause "error" when the request was
         valid, else nothing on stdout)
    124  --exit-status only: a deny by timeout
    130  --exit-status only: a deny by cancellation (Ctrl-C, Esc, EOF,
         SIGINT, SIGTERM, SIGHUP)

With 1, 124 and 130 the decision is still written; with 64, 65 and 69
nothing is.

Files:

    $XDG_CONFIG_HOME/askperm/config.toml  (else ~/.config/askperm/config.toml)
        settings: timeout, frontends, arm_delay, bell, [dialogs], [state],
        [breaker], [limits]; --config or ASKPERM_CONFIG name another
    $XDG_CONFIG_HOME/askperm/rules.toml   (else ~/.config/askperm/rules.toml)
        rules deciding before anyone is asked, beside every --rules FILE
    $XDG_STATE_HOME/askperm/              (else ~/.local/state/askperm/)
        what askperm remembers: askperm.db (rules, session approvals,
        breaker counts), prompts (the rate limit), audit.log, prompt.lock,
        pane.json;
        --state-dir or ASKPERM_STATE_DIR name another

A user file others could write is refused (exit 64). Flags win over
environment variables, which win over config.toml. The JSON Schemas are
printed by "askperm schema NAME"; the protocol is docs/protocol.md.`

const rootExample = `  # Ask a person about one request (terminal UI, line prompt or dialog)
  askperm < request.json

  # From a program: pipe the request in, read the decision out
  printf '%s' '{"id":"1","tool":"shell","action":"exec"}' | askperm --timeout 2m

  # Without a human (CI): one canned answer, or a file of them
  askperm --answer deny-once --message "not now" < request.json
  askperm --answers ci.toml --strict < request.json

  # In a shell script: branch on the exit status (the decision is still written)
  if askperm --exit-status < request.json > decision.json; then echo allowed; fi

  # The request_sha256 the decision must carry
  askperm digest < request.json

  # As an agent's hook (exit 2 blocks the call) or permission-prompt tool
  askperm hook claude-code
  askperm hook codex
  askperm mcp`

const askExample = `  askperm ask < request.json
  askperm ask --frontend line --timeout 60 < request.json
  askperm ask --answer allow-once < request.json`

const checkExample = `  # Which rules and remembered decisions would decide this request?
  askperm check < request.json
  askperm check --rules team.toml --json < request.json`

const schemaExample = `  askperm schema request > request.schema.json
  askperm schema decision`

const rulesExample = `  askperm rules list
  askperm rules forget 7
  askperm rules forget --all`

const rulesListExample = `  askperm rules list
  askperm rules list --json`

const rulesForgetExample = `  askperm rules forget 7
  askperm rules forget --all`

const sessionExample = `  askperm session list
  askperm session forget 6f1c…`

const sessionListExample = `  askperm session list --json`

const sessionForgetExample = `  # Forget one session's approvals, or every session's
  askperm session forget 6f1c…
  askperm session forget`

const logExample = `  askperm log --since 1h
  askperm log --decision deny --tool run_command
  askperm log --session 6f1c… --json`

const gateExample = `  # In an MCP client's server list: the filesystem server, gated
  askperm gate -- npx -y @modelcontextprotocol/server-filesystem /srv/project
  askperm gate --name files --rules team.toml -- ./my-mcp-server --stdio`

const hookExample = `  # In the agent's hook configuration, as the command to run
  askperm hook claude-code
  askperm hook codex --frontend yad,zenity`

const claudeHookExample = `  # .claude/settings.json: "hooks": {"PreToolUse": [{"matcher": "Bash",
  #   "hooks": [{"type": "command", "command": "askperm hook claude-code"}]}]}
  askperm hook claude-code < payload.json`

const codexHookExample = `  # The command of Codex's PermissionRequest hook
  askperm hook codex < payload.json`

const mcpExample = `  # Claude Code asks askperm before each tool call it would prompt for
  claude --permission-prompt-tool mcp__askperm__approve --mcp-config askperm.json
  # askperm.json: {"mcpServers": {"askperm": {"command": "askperm", "args": ["mcp"]}}}`

const paneExample = `  # In a spare terminal (or tmux pane): prompts of hooks and gates appear here
  askperm pane`

const digestLong = `Read one request, exactly as a caller would send it, and print the
request_sha256 a decision for it must carry: the lowercase hex SHA-256 of
the RFC 8785 (JCS) canonical form of the request's bytes. A caller can
compare it with the decision's request_sha256 without a JCS library of its
own.

The request is read as askperm reads one (up to EOF, at most --max-request
bytes, before --timeout) and must be one askperm accepts: a request askperm
would refuse has no decision to match, so it is exit 65 saying why.`

const digestExample = `  askperm digest < request.json
  want=$(askperm digest < request.json)
  askperm < request.json | jq -e --arg w "$want" '.request_sha256 == $w'`

const reviewLong = `A reviewer program (protocol section 12), to be named in config.toml's
[[reviewer]] tables: it reads one request on stdin and asks a model behind
any OpenAI-compatible chat endpoint (Ollama, a llama.cpp server, vLLM) for
a verdict, held to a JSON schema ({"verdict": "allow|deny|abstain",
"reason": "..."}). The request is passed as untrusted data, JSON-escaped
between markers, below a rubric that allows only what is low-risk: tools
that only read, inside the workdir (docs/review.md).

An allow or a deny is written as the decision for the request, once, cause
and frontend reviewer; a deny's message is the model's reason, cut and
cleaned. Whatever the model says, only a read inside the workdir is ever
allowed: never a request annotated destructive, a command line, a URL, a
path outside the workdir, or a grant that is not a read. Anything
uncertain, malformed, slow or failing is an abstention: nothing on stdout,
exit 3, the reason on stderr; askperm then asks the next reviewer, or a
person.`

const reviewExample = `  # config.toml
  [[reviewer]]
  name = "local-model"
  command = ["/usr/local/bin/askperm", "review", "--endpoint", "http://127.0.0.1:11434/v1", "--model", "qwen2.5:7b"]
  timeout = "10s"
  # try it
  askperm review --endpoint http://127.0.0.1:11434/v1 --model qwen2.5:7b < request.json; echo "exit $?"`

const versionExample = `  askperm --version
  askperm version`

const completionExample = `  # bash (needs the bash-completion package: apt install bash-completion,
  # brew install bash-completion@2): now, or for every new shell
  source <(askperm completion bash)
  askperm completion bash > /etc/bash_completion.d/askperm
  # zsh, fish
  askperm completion zsh > "${fpath[1]}/_askperm"
  askperm completion fish > ~/.config/fish/completions/askperm.fish`

// examples are the commands' examples by command path.
var examples = map[string]string{
	"askperm":                       rootExample,
	"askperm ask":                   askExample,
	"askperm check":                 checkExample,
	"askperm digest":                digestExample,
	"askperm review":                reviewExample,
	"askperm schema":                schemaExample,
	"askperm rules":                 rulesExample,
	"askperm rules list":            rulesListExample,
	"askperm rules forget":          rulesForgetExample,
	"askperm session":               sessionExample,
	"askperm session list":          sessionListExample,
	"askperm session forget":        sessionForgetExample,
	"askperm log":                   logExample,
	"askperm gate":                  gateExample,
	"askperm hook":                  hookExample,
	"askperm hook claude-code":      claudeHookExample,
	"askperm hook codex":            codexHookExample,
	"askperm mcp":                   mcpExample,
	"askperm pane":                  paneExample,
	"askperm version":               versionExample,
	"askperm completion":            completionExample,
	"askperm completion bash":       "  # needs the bash-completion package (apt install bash-completion)\n  source <(askperm completion bash)",
	"askperm completion zsh":        "  askperm completion zsh > \"${fpath[1]}/_askperm\"",
	"askperm completion fish":       "  askperm completion fish | source",
	"askperm completion powershell": "  askperm completion powershell | Out-String | Invoke-Expression",
}
