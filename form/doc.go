// Package form is the two-stage permission form as data, the same for
// every frontend and for canned answers:
//
//	f := form.New(req, form.Options{})
//	f.Choices()                        // what stage "choice" offers
//	f.Message(form.StageChoice, a)     // the request as plain text, rendered safe
//	f.Schema(form.StageChoice)         // the stage's answer as a JSON Schema
//	f.RuleQuestions(a)                 // what stage "rule" asks, with its options and wording
//	d, err := f.Decide(a, by, now)     // validate a whole answer and build the decision
//
// A frontend asks one stage at a time through a Stager, and Walk owns the
// order of the stages and the Back loop. Every string of the request
// reaches a person through Line, Block or Preview, which escape controls,
// bidi, invisible and look-alike characters visibly. The package draws
// nothing itself.
package form
