package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkTUIFirstFrame measures from spawning askperm to the first
// complete frame: the choice list and the countdown on the terminal. The
// terminal answers no query.
func BenchmarkTUIFirstFrame(b *testing.B) { benchFirstFrame(b, false) }

// BenchmarkTUIFirstFrameAnswering is BenchmarkTUIFirstFrame on a terminal
// that answers the queries terminals answer: the cursor position (DSR),
// the device attributes (DA1) and the colours (OSC 10, OSC 11). The
// figure must not differ: askperm waits for no reply.
func BenchmarkTUIFirstFrameAnswering(b *testing.B) { benchFirstFrame(b, true) }

// terminalReplies are a terminal's answers to the queries it answers.
var terminalReplies = []struct{ query, reply string }{
	{"\x1b[6n", "\x1b[24;1R"},
	{"\x1b[c", "\x1b[?62;22c"},
	{"\x1b[0c", "\x1b[?62;22c"},
	{"\x1b]10;?\x07", "\x1b]10;rgb:ffff/ffff/ffff\x07"},
	{"\x1b]10;?\x1b\\", "\x1b]10;rgb:ffff/ffff/ffff\x1b\\"},
	{"\x1b]11;?\x07", "\x1b]11;rgb:0000/0000/0000\x07"},
	{"\x1b]11;?\x1b\\", "\x1b]11;rgb:0000/0000/0000\x1b\\"},
}

// answerQueries answers every query in what askperm wrote from offset on,
// when answer is set, and returns the new offset and how many queries it
// saw.
func answerQueries(s *ptySession, offset int, answer bool) (int, int) {
	raw := s.raw()
	// A query may straddle the offset: look back a little.
	from := max(0, offset-8)
	seen := 0
	for _, q := range terminalReplies {
		for i := from; ; {
			j := strings.Index(raw[i:], q.query)
			if j < 0 {
				break
			}
			i += j + len(q.query)
			if i <= offset {
				continue
			}
			seen++
			if answer {
				s.send(q.reply)
			}
		}
	}
	return len(raw), seen
}

func benchFirstFrame(b *testing.B, answer bool) {
	req, err := os.ReadFile("../testdata/requests/write-file.json")
	if err != nil {
		b.Fatal(err)
	}
	env := tuiEnv(b)
	queries := 0
	times := make([]time.Duration, 0, b.N)
	for range b.N {
		start := time.Now()
		s := startPTY(b, req, env, "--frontend", "tui", "--timeout", "20s")
		offset := 0
		for {
			var n int
			offset, n = answerQueries(s, offset, answer)
			queries += n
			text := s.text()
			if strings.Contains(text, "Deny once") && tuiCountdown.MatchString(text) {
				break
			}
			select {
			case err := <-s.done:
				b.Fatalf("askperm exited: %v; stderr: %s", err, s.stderr.String())
			case <-time.After(time.Millisecond):
			}
		}
		times = append(times, time.Since(start))
		b.StopTimer()
		s.send("\x03")
		if r := s.wait(); r.code != 0 {
			b.Fatalf("exit %d; stderr: %s", r.code, r.stderr)
		}
		_, n := answerQueries(s, offset, false)
		queries += n
		b.StartTimer()
	}
	b.ReportMetric(float64(queries)/float64(b.N), "queries/op")
	// The machine's other work makes some spawns slow: the median says
	// more than the mean.
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2])/float64(time.Millisecond), "median-ms")
}
