// Package team owns askperm's team mode (protocol section 11) as a host's
// askperm needs it, with no NATS code: requests and answers are carried
// between machines over NATS JetStream by askperm-team (its bridge, in
// package wire), so that askperm links neither the NATS client nor its
// start-up cost. It holds the [team] configuration, the names of every
// stream, bucket, subject and key, the signed answer and its checks
// (crypto/ed25519, NKey public keys decoded here), the bridge's line
// protocol, and the `team` frontend that runs the bridge and verifies
// each answer it passes on: the bridge carries, it never decides. Team
// memory's host side is here too: signed team rules and their checks at
// each use, the host's cache of them (fetched by askperm-team), and the
// audit lines of team decisions (published by askperm-team). The
// approver's side (askperm-team) builds on the same names and answers.
//
// Nothing of a request's text ever goes into a subject or a key: only host
// names, digests and public keys do.
package team
