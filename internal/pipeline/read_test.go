package pipeline

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// Every size reads whole, from a reader of unknown size at once or in
// ever smaller reads, and from a regular file read from an offset; one byte over
// the cap is too large.
func TestReadSizes(t *testing.T) {
	for _, size := range []int{0, 1, 4095, firstRead - 1, firstRead, firstRead + 1, 3*firstRead + 7} {
		in := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		path := filepath.Join(t.TempDir(), "req")
		if err := os.WriteFile(path, append([]byte("skipped"), in...), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, max := range []int64{int64(size), int64(size) + 1, 4 * firstRead} {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Seek(int64(len("skipped")), 0); err != nil {
				t.Fatal(err)
			}
			for name, r := range map[string]io.Reader{
				"file":   f,
				"reader": bytes.NewReader(in),
				"halves": iotest.HalfReader(bytes.NewReader(in)),
			} {
				b, err := Read(context.Background(), r, max)
				if err != nil || !bytes.Equal(b, in) {
					t.Errorf("%s of %d bytes, at most %d: got %d bytes, %v", name, size, max, len(b), err)
				}
			}
			f.Close()
		}
		if size > 0 {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Read(context.Background(), f, int64(size+len("skipped")-1)); err == nil || !strings.Contains(err.Error(), "larger than") {
				t.Errorf("%d bytes, at most one less: got %v", size+len("skipped"), err)
			}
			f.Close()
		}
	}
}

// A request that fills the first buffer exactly is not copied into a
// larger one just to see its end.
func TestReadFullBufferNotGrown(t *testing.T) {
	in := bytes.Repeat([]byte("x"), firstRead)
	b, err := Read(context.Background(), iotest.HalfReader(bytes.NewReader(in)), 4*firstRead)
	if err != nil || !bytes.Equal(b, in) || cap(b) != firstRead {
		t.Errorf("got %d bytes (cap %d), %v", len(b), cap(b), err)
	}
}

// Nothing on stdin, or only blanks, is said as such, not as JSON that
// ended early.
func TestReadNothing(t *testing.T) {
	for _, in := range []string{"", " \n\t"} {
		if _, err := ReadRequest(context.Background(), strings.NewReader(in), 64); err == nil || err.Error() != "no request on stdin (pipe one JSON request in)" {
			t.Errorf("Read(%q) = %v", in, err)
		}
	}
}
