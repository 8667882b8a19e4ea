// Package decision owns the protocol's data: the Request and Decision types,
// the strict request parser, the canonical (RFC 8785) form and digests, and
// the binding of an approval to one exact call. It never touches a terminal,
// the disk or the clock: callers pass in bytes and times.
package decision
