package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	long := strings.Repeat("x", 1<<17) // longer than the buffer: read in pieces
	r := NewReader(strings.NewReader("{}\n" + long + "\nlast"))
	for _, want := range []string{"{}\n", long + "\n"} {
		if got, err := r.Read(); err != nil || string(got) != want {
			t.Fatalf("got %.20q, %v; want %.20q", got, err, want)
		}
	}
	if got, err := r.Read(); string(got) != "last" || !errors.Is(err, io.EOF) {
		t.Errorf("the last message without a newline: %q, %v", got, err)
	}
}

func TestReaderCap(t *testing.T) {
	r := NewReader(io.MultiReader(strings.NewReader(strings.Repeat("x", MaxLine+1)), strings.NewReader("\n{}\n")))
	if got, err := r.Read(); got != nil || !errors.Is(err, ErrTooLong) {
		t.Errorf("got %d bytes, %v; want ErrTooLong", len(got), err)
	}
	if MaxLine != 64<<20 || !strings.Contains(ErrTooLong.Error(), "64 MiB") {
		t.Errorf("ErrTooLong says %q, MaxLine is %d", ErrTooLong, MaxLine)
	}
}

func TestWriter(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	line := make([]byte, 2, 8)
	copy(line, "{}")
	w.Write(line)
	w.Write([]byte("[]\n"))
	if got := line[:3]; string(got) != "{}\x00" {
		t.Errorf("the caller's array was written to: %q", got)
	}
	w.Close()
	w.Write([]byte("late"))
	if out.String() != "{}\n[]\n" {
		t.Errorf("got %q", out.String())
	}
}

func TestMessages(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{string(Response([]byte(`"a"`), map[string]any{})), `{"jsonrpc":"2.0","id":"a","result":{}}`},
		{string(Error(nil, ParseError, "bad")), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`},
		{string(Error([]byte("7"), MethodNotFound, "no")), `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}`},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %s\nwant %s", tc.got, tc.want)
		}
	}
}

// Decode tells a line that is not JSON from one that is no message.
func TestDecode(t *testing.T) {
	for line, want := range map[string]int{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`: 0,
		`{"jsonrpc":"2.0","id":"a","method":"x"}`:  0,
		`{"id":-1.5,"result":{}}`:                  0,
		`{"method":"notifications/initialized"}`:   0,
		`NaN`:                                      ParseError,
		`{} {}`:                                    ParseError,
		`{"id":1`:                                  ParseError,
		`[{"id":1}]`:                               InvalidRequest,
		`null`:                                     InvalidRequest,
		`"ping"`:                                   InvalidRequest,
		`{"id":true,"method":"ping"}`:              InvalidRequest,
		`{"id":{},"method":"ping"}`:                InvalidRequest,
		`{"id":1,"method":2}`:                      InvalidRequest,
	} {
		if m, code := Decode([]byte(line)); code != want || code == 0 && m.Method == "" && m.Result == nil {
			t.Errorf("%s: code %d, want %d (%+v)", line, code, want, m)
		}
	}
}
