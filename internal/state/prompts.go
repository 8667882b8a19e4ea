package state

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// PromptsFile is the file of the prompt rate limit in the state
// directory: one line per prompt taken in the last minute, its time in
// Unix nanoseconds and its key (a session, quoted). It lives apart from
// the store: taking a prompt before a person is asked then commits
// nothing (a commit syncs the disk twice, about half a millisecond before
// the prompt appears), and a count lost in a crash costs nothing but a
// fresh minute.
const PromptsFile = "prompts"

// Rate is the prompt rate limit: how many prompts a session (or the
// user's requests without one) may have in any sliding minute, and how
// many the user may have over all sessions, so that a caller naming a new
// session for every request is limited too. Zero is no limit.
type Rate struct {
	Session, User int
}

// DefaultRate is the prompt rate limit unless configured.
var DefaultRate = Rate{Session: 60, User: 120}

// TakePrompt takes one of the prompts that key (a session, or "" for the
// user's requests without one) may have in the last minute under rate,
// and reports whether one was left. Helpers take prompts one at a time,
// under the file's lock, waited for within ctx (ErrLocked). A file that
// does not read as prompts is an error (ErrCorrupt) and is started again.
func TakePrompt(ctx context.Context, dir, key string, now time.Time, rate Rate) (bool, error) {
	if rate.Session <= 0 && rate.User <= 0 {
		return true, nil
	}
	path := filepath.Join(dir, PromptsFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := checkOwned(path, false); err != nil {
		return false, err
	}
	if err := lockFile(ctx, f); err != nil {
		return false, err
	}
	old, err := io.ReadAll(f)
	if err != nil {
		return false, err
	}
	kept, n, all, perr := recentPrompts(old, key, now.Add(-time.Minute).UnixNano())
	ok := (rate.Session <= 0 || n < rate.Session) && (rate.User <= 0 || all < rate.User)
	if ok {
		kept = appendPrompt(kept, now.UnixNano(), key)
	}
	if err := f.Truncate(0); err != nil {
		return false, err
	}
	if _, err := f.WriteAt(kept, 0); err != nil {
		return false, err
	}
	if perr != nil {
		return ok, perr
	}
	return ok, nil
}

// recentPrompts returns the lines of file for prompts after since, how
// many of them are key's, and how many there are. A file with a line that
// does not read is started again (nothing kept), with ErrCorrupt.
func recentPrompts(file []byte, key string, since int64) (kept []byte, n, all int, err error) {
	sc := bufio.NewScanner(bytes.NewReader(file))
	sc.Buffer(nil, len(file)+1)
	for sc.Scan() {
		line := sc.Bytes()
		at, quoted, ok := bytes.Cut(line, []byte{' '})
		t, terr := strconv.ParseInt(string(at), 10, 64)
		k, qerr := strconv.Unquote(string(quoted))
		if !ok || terr != nil || qerr != nil {
			return nil, 0, 0, fmt.Errorf("%w: %s: %q is no prompt", ErrCorrupt, PromptsFile, line)
		}
		if t <= since {
			continue
		}
		if k == key {
			n++
		}
		all++
		kept = append(append(kept, line...), '\n')
	}
	return kept, n, all, nil
}

func appendPrompt(b []byte, at int64, key string) []byte {
	b = strconv.AppendInt(b, at, 10)
	b = append(b, ' ')
	b = strconv.AppendQuote(b, key)
	return append(b, '\n')
}
