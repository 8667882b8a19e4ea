// Package form owns the two-stage permission form as data: which choices a
// request offers, each stage's JSON Schema and message, the validation of an
// answer, the Back loop every frontend walks, the decision an answer builds,
// and the safe rendering of untrusted request text. It draws nothing itself.
package form
