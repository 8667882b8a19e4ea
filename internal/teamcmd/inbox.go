package teamcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	"github.com/spf13/cobra"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/answers"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/inbox"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/wire"
)

// inboxOptions are the flags of askperm inbox and its commands.
type inboxOptions struct {
	stateDir, config, tty string
	json, show            bool
	// --web: the address to serve the inbox on, and its TLS files.
	web, tlsCert, tlsKey, origin string
	// --pair: offer a pairing link though a passkey is registered.
	pair bool
	// answer: the canned answer's fields.
	message, workdirScope, lifetime string
	grants                          []string
	scopes                          map[string]string
}

// inboxWait bounds reaching the server and reading the pending requests
// for inbox list and inbox answer.
const inboxWait = 30 * time.Second

func newInbox(s cli.Streams) *cobra.Command {
	o := &inboxOptions{}
	c := &cobra.Command{
		Use:   "inbox",
		Short: "Answer the team's pending requests: a live list, each opened in the terminal UI's form",
		Long: `askperm inbox is the approver's side of team mode: it lists the requests
pending on the team's NATS server ([team] in config.toml) from every host
your credentials may read, newest last, updating live, and opens the one
you choose in the terminal UI's two-stage form. Your answer is signed with
your approver key and written for the requesting host, which accepts it
only if your public key is among its approvers. A request leaves the list
as soon as its host marks it done (another approver answered first, or it
closed) or its deadline passes; a form open on it closes then.

The team's streams and buckets must exist (askperm-team setup, run once
with the set-up user's credentials, makes them); the inbox refuses any that
is not as setup makes it. Keys: Up and Down choose, Enter opens, q, Esc or Ctrl-C quit; in the form,
Esc goes back to the list without answering.`,
		Example: `  # Once: create your approver key, and give its public half to the hosts
  askperm inbox key
  # The live list; Enter opens a request in the terminal UI's form
  askperm inbox
  # The same as a web page on 127.0.0.1:8765; open the pairing link it prints
  askperm inbox --web 127.0.0.1:8765`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if c.Flags().Changed("web") {
				return runInboxWeb(s, o)
			}
			return runInboxScreen(s, o)
		},
	}
	c.PersistentFlags().StringVar(&o.stateDir, "state-dir", "", "the state directory, where the key is by default (env ASKPERM_STATE_DIR)")
	c.PersistentFlags().StringVar(&o.config, "config", "", "config file (env ASKPERM_CONFIG)")
	c.Flags().StringVar(&o.tty, "tty", "", "terminal device to use (env ASKPERM_TTY; default /dev/tty)")
	c.Flags().StringVar(&o.web, "web", "", "serve the inbox as a web page on ADDR instead, e.g. "+defaultWebAddr+" (a loopback address unless --tls-cert and --tls-key are given)")
	c.Flags().StringVar(&o.tlsCert, "tls-cert", "", "--web: serve over TLS with this certificate file (PEM)")
	c.Flags().StringVar(&o.tlsKey, "tls-key", "", "--web: the TLS certificate's private key file (PEM)")
	c.Flags().BoolVar(&o.pair, "pair", false, "--web: print a pairing link (valid 5 minutes) though a passkey is registered, to pair another browser")
	c.Flags().StringVar(&o.origin, "origin", "", "--web: the page's origin as the browser sees it, behind a tunnel or proxy (default: http://localhost:PORT, https with TLS); passkeys are bound to its host name")

	key := &cobra.Command{
		Use:   "key",
		Short: "Create your approver key and print its public half (hosts list it in approvers)",
		Example: `  askperm inbox key
  # Print the public half of the key you have
  askperm inbox key --show`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return runInboxKey(s, o) },
	}
	key.Flags().BoolVar(&o.show, "show", false, "print the public half of the existing key; create none")

	list := &cobra.Command{
		Use:   "list",
		Short: "Print the pending requests and exit",
		Example: `  askperm inbox list
  askperm inbox list --json | jq -r .id`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return runInboxList(s, o) },
	}
	list.Flags().BoolVar(&o.json, "json", false, "one JSON object per line and request")

	answer := &cobra.Command{
		Use:   "answer ID CHOICE",
		Short: "Answer one pending request as a canned answer would, signed, and exit",
		Long: `askperm inbox answer writes your signed answer to the pending request whose
id is ID (HOST.ASK, as askperm inbox list shows it): the answer is signed
for that one asking on that host, and decides nothing else. CHOICE is one of
allow-once, deny-once, allow-always and deny-always, as --answer takes
them; the rule of an always-choice takes the request's defaults unless
--grant, --scope, --workdir-scope or --lifetime say otherwise, and is
checked as the form checks a person's. Each approver answers a request
once.`,
		Example: `  askperm inbox answer "$id" allow-once
  askperm inbox answer "$id" deny-once --message "not on Fridays"
  askperm inbox answer "$id" allow-always --scope path=/home/a/p/ --lifetime 900`,
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error { return runInboxAnswer(s, o, args[0], args[1]) },
	}
	f := answer.Flags()
	f.StringVar(&o.message, "message", "", "the denial reason given with a deny")
	f.StringSliceVar(&o.grants, "grant", nil, "allow-always: a grant the rule gives (repeatable; default all requested)")
	f.StringToStringVar(&o.scopes, "scope", nil, "always: DIMENSION=MATCH, the scope the rule covers of a dimension (repeatable)")
	f.StringVar(&o.workdirScope, "workdir-scope", "", "always: selected (this workdir, the default) or all")
	f.StringVar(&o.lifetime, "lifetime", "", "always: how long the rule lives: indefinite (the default), 900 or 57600 (seconds)")
	cli.Must(answer.RegisterFlagCompletionFunc("workdir-scope", cli.Fixed("selected", "all")))
	cli.Must(answer.RegisterFlagCompletionFunc("lifetime", cli.Fixed(decision.Lifetimes...)))

	c.AddCommand(key, list, answer)
	return c
}

// inboxSettings resolves the settings of the inbox commands.
func inboxSettings(s cli.Streams, o *inboxOptions) (settings.Settings, error) {
	set, err := settings.Resolve(settings.Flags{StateDir: o.stateDir, Config: o.config, TTY: o.tty}, s.Getenv)
	if err != nil {
		return set, cli.Usage("%v", err)
	}
	return set, nil
}

// keyPath is where the approver's key is: [team] key, else the state
// directory's team.nk.
func keyPath(set settings.Settings) (string, error) {
	switch {
	case set.Team != nil && set.Team.Key != "":
		return set.Team.Key, nil
	case set.StateDir != "":
		return filepath.Join(set.StateDir, team.KeyFile), nil
	}
	return "", cli.Usage("inbox: no place for the approver key: set [team] key in config.toml, XDG_STATE_HOME or HOME, or give --state-dir")
}

func runInboxKey(s cli.Streams, o *inboxOptions) error {
	set, err := inboxSettings(s, o)
	if err != nil {
		return err
	}
	path, err := keyPath(set)
	if err != nil {
		return err
	}
	var kp nkeys.KeyPair
	if o.show {
		kp, err = wire.LoadKey(path)
	} else {
		kp, err = wire.CreateKey(path)
		if errors.Is(err, wire.ErrKeyExists) {
			return cli.Usage("inbox key: %v: answers signed with it would no longer be yours; askperm inbox key --show prints its public half", err)
		}
	}
	if err != nil {
		return cli.Usage("inbox key: %v", err)
	}
	if !o.show {
		cli.Warn(s.ErrOut, "created the approver key "+path+"; list the public key below in [team] approvers of every host")
	}
	_, err = fmt.Fprintln(s.Decision, team.PublicKey(kp))
	return err
}

// approver is the approver's connection to the team: the pending list,
// kept current, and the key that signs.
type approver struct {
	team *inbox.Team
	key  nkeys.KeyPair
	set  settings.Settings
}

// connectApprover loads the approver's key, reaches the team's server within
// ctx, binds the streams and buckets (checked as a host checks them), and
// reads the pending requests, telling warnings of what it ignores. The connection
// lasts until ctx ends.
func connectApprover(ctx context.Context, set settings.Settings, warnings func(error)) (*approver, error) {
	if set.Team == nil {
		return nil, cli.Usage("inbox: no [team] in config.toml: give the team server's url, and your creds, as docs/inbox.md shows")
	}
	path, err := keyPath(set)
	if err != nil {
		return nil, err
	}
	kp, err := wire.LoadKey(path)
	if err != nil {
		return nil, cli.Usage("inbox: the approver key: %v (askperm inbox key creates one)", err)
	}
	internal := func(what string, err error) error {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("inbox: %s: %w", what, err)}
	}
	nc, err := wire.Connect(ctx, *set.Team, team.ApproverInbox(team.PublicKey(kp)))
	if err != nil {
		return nil, internal("the team's server", err)
	}
	context.AfterFunc(ctx, nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, internal("jetstream", err)
	}
	t, err := inbox.Watch(ctx, js, *set.Team, warnings)
	if err != nil {
		return nil, internal("reading the pending requests", err)
	}
	return &approver{team: t, key: kp, set: set}, nil
}

// stderrWarnings writes each warning of the watch on stderr.
func stderrWarnings(s cli.Streams) func(error) {
	return func(err error) { cli.Warn(s.ErrOut, "inbox: "+err.Error()) }
}

// inboxEntry is a pending request in inbox list --json.
type inboxEntry struct {
	// ID is what inbox answer takes: host and ask id.
	ID        string         `json:"id"`
	Host      string         `json:"host"`
	Digest    string         `json:"request_sha256"`
	SessionID string         `json:"session_id,omitempty"`
	Published time.Time      `json:"published"`
	Deadline  time.Time      `json:"deadline"`
	Question  string         `json:"question"`
	Request   jsontext.Value `json:"request"`
}

var inboxHeading = []string{"HOST", "ID", "SESSION", "AGE", "LEFT", "QUESTION"}

// withPending runs do with the approver's connection, its pending list
// read and expired at now, within inboxWait or until a signal.
func withPending(s cli.Streams, o *inboxOptions, do func(ctx context.Context, a *approver, now time.Time) error) error {
	set, err := inboxSettings(s, o)
	if err != nil {
		return err
	}
	ctx, stop := cli.OnSignals(context.Background())
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, inboxWait)
	defer cancel()
	a, err := connectApprover(ctx, set, stderrWarnings(s))
	if err != nil {
		return err
	}
	now := time.Now()
	a.team.List.Expire(now)
	return do(ctx, a, now)
}

func runInboxList(s cli.Streams, o *inboxOptions) error {
	return withPending(s, o, func(_ context.Context, a *approver, now time.Time) error {
		return writeInboxList(s, o, a.team.List.Pending(), now)
	})
}

// writeInboxList writes the pending requests, a table or JSON lines.
func writeInboxList(s cli.Streams, o *inboxOptions, pending []*inbox.Entry, now time.Time) (err error) {
	out := bufio.NewWriterSize(s.Decision, 64<<10)
	if o.json {
		for _, e := range pending {
			err = errors.Join(err, cli.WriteJSON(out, inboxEntry{ID: e.ID(), Host: e.Host, Digest: e.Digest, SessionID: e.Request.SessionID,
				Published: e.Published.UTC(), Deadline: e.Deadline.UTC(), Question: e.Question, Request: e.Raw}))
		}
	} else {
		err = cli.WriteTable(out, inboxHeading, func(e *inbox.Entry) []string {
			return inbox.Row(e, now)
		}, func(yield func(*inbox.Entry) error) error {
			for _, e := range pending {
				if err := yield(e); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err = errors.Join(err, out.Flush()); err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: err}
	}
	return nil
}

// cannedAnswer is the canned answer the flags of inbox answer give,
// checked as --answer and an answers file are.
func (o *inboxOptions) cannedAnswer(choice string) (answers.Entry, error) {
	if form.Choice(choice) == form.AllowSession {
		return answers.Entry{}, errors.New("allow-session: a session approval lives in its host's memory, not the team's; give allow-once or allow-always")
	}
	f, err := answers.One(answers.Entry{Choice: form.Choice(choice), Message: o.message, Grants: o.grants,
		Scopes: o.scopes, WorkdirScope: o.workdirScope, Lifetime: o.lifetime})
	if err != nil {
		return answers.Entry{}, err
	}
	return f.Entries[0], nil
}

func runInboxAnswer(s cli.Streams, o *inboxOptions, id, choice string) error {
	host, ask, err := team.ParseAskID(id)
	if err != nil {
		return cli.Usage("inbox answer: ID: %v", err)
	}
	canned, err := o.cannedAnswer(choice)
	if err != nil {
		return cli.Usage("inbox answer: %v", err)
	}
	return withPending(s, o, func(ctx context.Context, a *approver, _ time.Time) error {
		e, why := a.team.List.Get(host, ask)
		if e == nil {
			return &cli.ExitError{Code: cli.ExitNoMatch, Err: fmt.Errorf("inbox answer: %s: %v", id, why)}
		}
		f := inbox.Form(e)
		ans := canned.Answer(f)
		err := a.team.Answer(ctx, a.key, e, f, ans)
		switch {
		case errors.Is(err, inbox.ErrAnswered):
			return &cli.ExitError{Code: cli.ExitNoMatch, Err: fmt.Errorf("inbox answer: %s: %w", id, err)}
		case errors.Is(err, inbox.ErrRejected):
			return cli.Usage("inbox answer: %v", err)
		case err != nil:
			return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("inbox answer: %w", err)}
		}
		cli.Warn(s.ErrOut, fmt.Sprintf("answered %s (request %s): %s", form.Line(id), e.Digest, form.ChoiceLabel(ans.Choice)))
		return nil
	})
}

func runInboxScreen(s cli.Streams, o *inboxOptions) error {
	// Warnings go to the screen's status line: stderr would draw over it.
	return withLasting(s, o, func(error) {}, func(ctx context.Context, a *approver) error {
		if err := (inbox.Screen{Team: a.team, Key: a.key, Prompt: a.set.Prompt}).Run(ctx); err != nil {
			return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("inbox: %w", err)}
		}
		return nil
	})
}

// withLasting runs do with the approver's connection, which lasts until
// a signal or do's return, though reaching the server and reading the
// pending requests must end within inboxWait.
func withLasting(s cli.Streams, o *inboxOptions, warnings func(error), do func(ctx context.Context, a *approver) error) error {
	set, err := inboxSettings(s, o)
	if err != nil {
		return err
	}
	ctx, stop := cli.OnSignals(context.Background())
	defer stop()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	slow := time.AfterFunc(inboxWait, func() { cancel(fmt.Errorf("no list of pending requests within %s", inboxWait)) })
	a, err := connectApprover(ctx, set, warnings)
	if !slow.Stop() && err == nil {
		err = &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("inbox: %w", context.Cause(ctx))}
	}
	if err != nil {
		return err
	}
	return do(ctx, a)
}
