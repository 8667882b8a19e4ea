// Package jsonrpc owns what askperm's MCP peers on stdio (askperm mcp,
// askperm gate) share of JSON-RPC 2.0: one message per line, read under a
// size cap and written whole, one writer at a time; the envelope they read
// of a message; and the answers they build themselves (results, errors).
package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// MaxLine caps one message: a peer that sends more is cut off rather than
// let it grow askperm's memory without bound.
const MaxLine = 64 << 20

// ErrTooLong ends a reading: a message was longer than MaxLine. (A
// constant text: fmt at package initialisation would cost every askperm
// process, MCP or not.)
var ErrTooLong = errors.New("a message longer than 64 MiB")

// Error codes of the JSON-RPC 2.0 specification.
const (
	ParseError     = -32700
	InvalidRequest = -32600
	MethodNotFound = -32601
	InvalidParams  = -32602
)

// Message is what a peer reads of one message: a request (Method set, ID
// nil for a notification) or a response (Result or Error set).
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// Decode reads the message on line (without surrounding space; a blank
// line is the caller's to skip). code is 0, or the error code of a line
// that is not one JSON value (ParseError) or not a message: an object
// whose id, if any, is a string or a number (InvalidRequest).
func Decode(line []byte) (m Message, code int) {
	err := json.Unmarshal(line, &m)
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return m, ParseError
	case err != nil || len(line) == 0 || line[0] != '{' || !ValidID(m.ID):
		return m, InvalidRequest
	}
	return m, 0
}

// ValidID says id is absent (a notification) or one MCP allows: a string
// or a number.
func ValidID(id json.RawMessage) bool {
	return id == nil || id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9'
}

// Reader reads newline-ended messages.
type Reader struct{ r *bufio.Reader }

// NewReader reads messages from r.
func NewReader(r io.Reader) *Reader { return &Reader{bufio.NewReaderSize(r, 1<<16)} }

// Read returns the next message with its newline; the last one may have
// none, and comes with the error that ended the stream (io.EOF at its
// end). A message longer than MaxLine is not returned: ErrTooLong.
func (r *Reader) Read() ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxLine {
			return nil, ErrTooLong
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// Writer writes whole lines, one writer at a time, so that answers written
// by concurrent calls never interleave.
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

// NewWriter writes lines to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes line, ending it with a newline if it has none. Write errors
// are dropped: a peer that stopped reading is noticed by its end of the
// input, not here.
func (l *Writer) Write(line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if !bytes.HasSuffix(line, []byte("\n")) {
		line = append(line[:len(line):len(line)], '\n')
	}
	_, _ = l.w.Write(line)
}

// Close drops every later write: once a session has ended nobody reads its
// answers, and a write to a closed pipe on stdout would kill the process.
func (l *Writer) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
}

// Response is the answer to the request id, with result: plain data
// (strings, maps, slices, raw JSON read from a message) that always
// encodes.
func Response(id json.RawMessage, result any) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, result})
	return b
}

// Error is an error answer to the request id; nil is an id that could not
// be read (JSON null).
func Error(id json.RawMessage, code int, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	type object struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   object          `json:"error"`
	}{"2.0", id, object{code, message}})
	return b
}
