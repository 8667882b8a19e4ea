package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/wire"
	"github.com/askperm/askperm/internal/testbin"
)

// teamPending is how many requests the inbox holds for its memory row:
// the inbox's own cap.
const teamPending = 10_000

// teamBench is a local NATS server with JetStream and no authentication,
// a copy of askperm with askperm-team built beside it (where askperm
// finds it), and the [team] configs of a host and of an approver whose
// key signs the scripted answers.
type teamBench struct {
	srv                   *server.Server
	cfg                   team.Config // the approver's, resolved
	key                   nkeys.KeyPair
	askperm, program      string // the copy of askperm, and askperm-team beside it
	bin                   string // their directory, removed after
	hostConf, approveConf string
	approverState         string
}

// teamMode: section 9.
func teamMode() {
	const latency, memory = "team frontend: request to verified answer, whole process", "askperm inbox list with 10,000 pending requests"
	tb, err := startTeamBench()
	if err != nil {
		skip(latency, "cannot start: "+err.Error())
		skip(memory, "cannot start: "+err.Error())
		return
	}
	defer os.RemoveAll(tb.bin)
	defer tb.srv.Shutdown()
	if err := tb.latency(latency); err != nil {
		skip(latency, "failed: "+err.Error())
	}
	if err := tb.inboxMemory(memory); err != nil {
		skip(memory, "failed: "+err.Error())
	}
}

// startTeamBench builds askperm-team, starts the server, writes the
// configs and creates the streams and buckets with askperm-team setup
// (the server asks for no credentials).
func startTeamBench() (tb *teamBench, err error) {
	// askperm runs only an askperm-team nobody else may have written: not
	// one under the world-writable temporary directory.
	dir, err := testbin.Dir()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	tb = &teamBench{askperm: filepath.Join(dir, "askperm"), program: filepath.Join(dir, "askperm-team"),
		approverState: filepath.Join(work, "approver-state"), bin: dir}
	if err := copyFile(*askperm, tb.askperm); err != nil {
		return nil, err
	}
	build := exec.Command("go", "build", "-o", tb.program, "./cmd/askperm-team")
	build.Dir = *repo
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as bench/run.sh builds askperm
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building askperm-team: %v: %s", err, lastLines(string(out)))
	}
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: filepath.Join(work, "nats"), NoLog: true, NoSigs: true})
	if err != nil {
		return nil, err
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, errors.New("the NATS server did not start")
	}
	tb.srv = srv
	if tb.key, err = nkeys.CreateUser(); err != nil {
		return nil, err
	}
	seed, _ := tb.key.Seed()
	keyFile := file("approver.nk", append(seed, '\n'))
	pub := team.PublicKey(tb.key)
	url := "nats://" + srv.Addr().(*net.TCPAddr).String()
	tb.cfg = team.Config{URL: url, Host: "approver", Approvers: []string{pub}, Prefix: team.DefaultPrefix,
		Replicas: team.DefaultReplicas, Key: keyFile}
	tb.hostConf = file("team-host.toml", fmt.Appendf(nil, "[team]\nurl = %q\nhost = \"bench\"\napprovers = [%q]\n", url, pub))
	tb.approveConf = file("team-approver.toml", fmt.Appendf(nil, "[team]\nurl = %q\nhost = \"approver\"\nkey = %q\n", url, keyFile))
	if _, err := spawn([]string{tb.program, "setup", "--config", tb.approveConf}, env(newHome()), os.DevNull, ""); err != nil {
		tb.srv.Shutdown()
		return nil, err
	}
	return tb, nil
}

// connect is the approver's connection and its JetStream.
func (tb *teamBench) connect(ctx context.Context) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := wire.Connect(ctx, tb.cfg, team.ApproverInbox(team.PublicKey(tb.key)))
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// latency measures askperm --frontend team answered by a scripted
// approver that watches the requests stream and answers allow-once the
// moment a request appears, against the canned --answer allow-once: the
// difference is what the team adds, the approver's thinking excluded.
func (tb *teamBench) latency(what string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nc, js, err := tb.connect(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	stopped, err := tb.answerOnSight(ctx, js)
	if err != nil {
		return err
	}
	home := newHome()
	canned := file("team-canned.json", request(nil))
	reqs := make([]string, *runs+1) // run -1 is the warm-up
	for i := range reqs {
		reqs[i] = file(fmt.Sprintf("team-%d.json", i), request(func(m map[string]any) {
			m["id"], m["session_id"] = fmt.Sprintf("team-%d", i), fmt.Sprintf("team-%d", i)
		}))
	}
	var teamRuns []time.Duration
	teamRun := func(i int) (time.Duration, error) {
		r, err := spawn([]string{tb.askperm, "--config", tb.hostConf, "--frontend", "team", "--timeout", "30s", "--no-remember"},
			env(home), reqs[i+1], `"decision":"allow"`)
		if err == nil && i >= 0 {
			teamRuns = append(teamRuns, r.wall)
		}
		return r.wall, err
	}
	t, c, err := pair(*runs, teamRun, timed(fixed([]string{tb.askperm, "--answer", "allow-once", "--no-remember"}), env(home), fixed(canned), `"allow"`))
	cancel()
	if serr := <-stopped; err == nil && serr != nil && !errors.Is(serr, context.Canceled) {
		err = serr
	}
	if err != nil {
		return err
	}
	slices.Sort(teamRuns)
	p90 := teamRuns[(len(teamRuns)*9+9)/10-1]
	add(row{what + ", answered on sight (median)", ms(t), ms(c) + " (canned answer)", ratio(t, c), "-", fmt.Sprintf("adds %s", ms(t-c))})
	add(row{what + ", answered on sight (p90)", ms(p90), ms(c) + " (canned answer, median)", ratio(p90, c), "-", fmt.Sprintf("adds %s", ms(p90-c))})
	return nil
}

// answerOnSight starts the scripted approver: an ordered consumer of the
// requests stream from now on, each request decided allow-once with its
// defaults, signed and written at once. The channel gets why it stopped.
func (tb *teamBench) answerOnSight(ctx context.Context, js jetstream.JetStream) (<-chan error, error) {
	n := tb.cfg.Names()
	b, err := wire.Bind(ctx, js, tb.cfg)
	if err != nil {
		return nil, err
	}
	cons, err := js.OrderedConsumer(ctx, n.RequestStream(), jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy})
	if err != nil {
		return nil, err
	}
	msgs, err := cons.Messages()
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, msgs.Stop)
	stopped := make(chan error, 1)
	go func() {
		for {
			msg, err := msgs.Next()
			if err != nil {
				stopped <- errors.Join(err, ctx.Err())
				return
			}
			if err := tb.answer(ctx, b.Answers, n, msg); err != nil {
				stopped <- err
				return
			}
		}
	}()
	return stopped, nil
}

// answer writes the scripted approver's signed allow-once to msg's request.
func (tb *teamBench) answer(ctx context.Context, answers jetstream.KeyValue, n team.Names, msg jetstream.Msg) error {
	p, err := wire.ParsePending(n, msg.Subject(), msg.Headers(), msg.Data())
	if err != nil {
		return err
	}
	f := form.New(p.Request, form.Options{})
	a := f.Defaults()
	a.Choice = form.AllowOnce
	d, err := f.Decide(a, decision.FrontendTeam, time.Now())
	if err != nil {
		return err
	}
	signed, err := team.Sign(tb.key, d, p.Host, p.Ask)
	if err != nil {
		return err
	}
	return wire.WriteAnswer(ctx, answers, p.Host, p.Ask, signed)
}

// inboxMemory measures askperm-team inbox list --json, the process that
// reads the pending requests, with none pending and with teamPending
// pending: its peak resident set and wall time.
func (tb *teamBench) inboxMemory(what string) error {
	emptyRSS, emptyWall, err := tb.inboxList(0)
	if err != nil {
		return err
	}
	if err := tb.publishPending(teamPending); err != nil {
		return err
	}
	var rss []int64
	var walls []time.Duration
	for range *runs {
		k, w, err := tb.inboxList(teamPending)
		if err != nil {
			return err
		}
		rss, walls = append(rss, k), append(walls, w)
	}
	slices.Sort(rss)
	full, wall := rss[len(rss)/2], median(walls)
	add(row{what + ": peak memory of askperm-team inbox list --json", fmt.Sprintf("%.1f MiB", float64(full)/1024),
		fmt.Sprintf("%.1f MiB (none pending)", float64(emptyRSS)/1024), fmt.Sprintf("%.2f×", float64(full)/float64(emptyRSS)), "-",
		fmt.Sprintf("%.2f KiB a request", float64(full-emptyRSS)/teamPending)})
	add(row{what + ": wall time of askperm-team inbox list --json", ms(wall), ms(emptyWall) + " (none pending)", ratio(wall, emptyWall), "-", "-"})
	return nil
}

// inboxList runs askperm-team inbox list --json as the approver under GNU
// time, which reports the child's own peak (KiB), checks that it listed
// want requests, and returns the peak and the wall time.
func (tb *teamBench) inboxList(want int) (int64, time.Duration, error) {
	out := filepath.Join(work, "inbox-maxrss")
	r, err := spawn([]string{"/usr/bin/time", "-f", "%M", "-o", out, tb.program, "inbox", "list", "--json",
		"--config", tb.approveConf, "--state-dir", tb.approverState}, env(newHome()), os.DevNull, "")
	if err != nil {
		return 0, 0, err
	}
	if n := bytes.Count(r.stdout, []byte("\n")); n != want {
		return 0, 0, fmt.Errorf("inbox list listed %d requests, want %d", n, want)
	}
	text, err := os.ReadFile(out)
	if err != nil {
		return 0, 0, err
	}
	k, err := strconv.ParseInt(strings.TrimSpace(string(text)), 10, 64)
	return k, r.wall, err
}

// publishPending publishes n distinct requests from 20 hosts, as their
// team frontends would, pending for an hour.
func (tb *teamBench) publishPending(n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	nc, js, err := tb.connect(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	deadline := time.Now().Add(time.Hour)
	for i := range n {
		raw := request(func(m map[string]any) { m["id"] = fmt.Sprintf("pending-%d", i) })
		if err := wire.Publish(ctx, js, tb.cfg.Names(), fmt.Sprintf("host%d", i%20), team.NewAsk(), raw, deadline); err != nil {
			return err
		}
	}
	return nil
}
