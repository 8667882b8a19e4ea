package form

import "github.com/askperm/askperm/decision"

// Schema returns the JSON Schema (draft 2020-12) of a stage's answer, as a
// JSON-ready value. Stage "choice" takes {choice, message}; stage "rule"
// takes {back} or the rule's fields, with the form's defaults.
func (f *Form) Schema(stage Stage) map[string]any {
	props := map[string]any{}
	s := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	}
	if stage == StageChoice {
		enum := make([]any, len(f.choices))
		for i, c := range f.choices {
			enum[i] = string(c)
		}
		props["choice"] = map[string]any{"type": "string", "enum": enum, "default": string(DenyOnce)}
		props["message"] = map[string]any{"type": "string", "maxLength": MaxMessageBytes, "description": "the denial reason (optional)"}
		s["required"] = []any{"choice"}
		return s
	}
	def := f.Defaults()
	props["back"] = map[string]any{"type": "boolean", "description": "return to stage choice, keeping what was typed"}
	if len(f.Req.Grants) > 0 {
		names, defaults := make([]any, len(def.Grants)), make([]any, len(def.Grants))
		for i, g := range def.Grants {
			names[i], defaults[i] = g, g
		}
		props["grants"] = map[string]any{
			"type": "array", "items": map[string]any{"enum": names},
			"minItems": 1, "uniqueItems": true, "default": defaults,
			"description": "allow-always only",
		}
	}
	scopes := map[string]any{}
	var required []any
	for _, i := range f.AskedDimensions() {
		d := f.Req.Dimensions[i]
		matches := make([]any, len(d.Scopes))
		for j, sc := range d.Scopes {
			matches[j] = sc.Match
		}
		scopes[d.Name] = map[string]any{"enum": matches, "default": d.Scopes[d.Default].Match}
		required = append(required, d.Name)
	}
	if len(scopes) > 0 {
		props["scopes"] = map[string]any{"type": "object", "properties": scopes, "required": required, "additionalProperties": false}
	}
	if f.Req.Workdir != nil {
		props["workdir_scope"] = map[string]any{"enum": []any{decision.WorkdirSelected, decision.WorkdirAll}, "default": decision.WorkdirSelected}
	}
	lifetimes := make([]any, len(decision.Lifetimes))
	for i, l := range decision.Lifetimes {
		lifetimes[i] = l
	}
	props["lifetime"] = map[string]any{"enum": lifetimes, "default": decision.LifetimeIndefinite}
	return s
}
