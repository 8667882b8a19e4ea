// Package wire is the NATS client side of team mode (protocol section
// 11), linked only into askperm-team, never into askperm: the connection,
// the team's streams and buckets, publishing requests, reading pending
// requests, writing answers and ends, and the bridge that carries one
// request of a host's askperm to the team and its answers back
// (team.BridgeStart, team.BridgeEvent). What a host's askperm itself
// needs, names, keys, signed answers and their checks, is package team.
package wire
