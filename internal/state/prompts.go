package state

import (
	"bufio"
	"bytes"
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

// TakePrompt takes one of the perMinute prompts that key (a session, or
// "" for the user's requests without one) may have in any sliding minute,
// and reports whether one was left. Zero perMinute is no limit. Helpers
// take prompts one at a time, under the file's lock. A file that does not
// read as prompts is an error (ErrCorrupt) and is started again.
func TakePrompt(dir, key string, now time.Time, perMinute int) (bool, error) {
	if perMinute <= 0 {
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
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return false, err
	}
	old, err := io.ReadAll(f)
	if err != nil {
		return false, err
	}
	kept, n, perr := recentPrompts(old, key, now.Add(-time.Minute).UnixNano())
	ok := n < perMinute
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

// recentPrompts returns the lines of file for prompts after since, and how
// many of them are key's. A file with a line that does not read is
// started again (nothing kept), with ErrCorrupt.
func recentPrompts(file []byte, key string, since int64) (kept []byte, n int, err error) {
	sc := bufio.NewScanner(bytes.NewReader(file))
	sc.Buffer(nil, len(file)+1)
	for sc.Scan() {
		line := sc.Bytes()
		at, quoted, ok := bytes.Cut(line, []byte{' '})
		t, terr := strconv.ParseInt(string(at), 10, 64)
		k, qerr := strconv.Unquote(string(quoted))
		if !ok || terr != nil || qerr != nil {
			return nil, 0, fmt.Errorf("%w: %s: %q is no prompt", ErrCorrupt, PromptsFile, line)
		}
		if t <= since {
			continue
		}
		if k == key {
			n++
		}
		kept = append(append(kept, line...), '\n')
	}
	return kept, n, nil
}

func appendPrompt(b []byte, at int64, key string) []byte {
	b = strconv.AppendInt(b, at, 10)
	b = append(b, ' ')
	b = strconv.AppendQuote(b, key)
	return append(b, '\n')
}
