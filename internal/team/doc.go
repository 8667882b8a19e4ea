// Package team owns askperm's team mode (protocol section 11): requests
// and answers carried between machines over NATS JetStream. It holds the
// [team] configuration, the names of every stream, bucket, subject and key,
// the approver's signing key, the signed answer and its checks, the
// connection, and the `team` frontend that publishes a request and waits
// for a verified answer. The approver's side (askperm inbox) builds on the
// same names, keys and answers. Team memory is here too: the signed team
// rules an approver's always-answer writes, the host's cache of them and
// their checks at each use, and the audit stream of team decisions.
//
// Nothing of a request's text ever goes into a subject or a key: only host
// names, digests and public keys do.
package team
