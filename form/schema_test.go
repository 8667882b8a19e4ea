package form

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compile(t *testing.T, schema map[string]any) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	if err := c.AddResource("stage.json", schema); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("stage.json")
	if err != nil {
		t.Fatalf("stage schema does not compile: %v", err)
	}
	return s
}

func instance(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestStageSchemas(t *testing.T) {
	f := New(writeReq(), Options{})
	choice := compile(t, f.Schema(StageChoice))
	rule := compile(t, f.Schema(StageRule))
	for _, tc := range []struct {
		schema *jsonschema.Schema
		answer string
		valid  bool
	}{
		{choice, `{"choice":"allow-once"}`, true},
		{choice, `{"choice":"deny-once","message":"no"}`, true},
		{choice, `{"choice":"allow-session"}`, false}, // not offered without session memory
		{choice, `{"message":"no"}`, false},
		{choice, `{"choice":"deny-once","extra":1}`, false},
		{rule, `{"back":true}`, true},
		{rule, `{"grants":["fs.create"],"scopes":{"path":"*"},"workdir_scope":"all","lifetime":"900"}`, true},
		{rule, `{"grants":[],"scopes":{"path":"*"}}`, false},
		{rule, `{"grants":["net"],"scopes":{"path":"*"}}`, false},
		{rule, `{"scopes":{"path":"/"}}`, false},
		{rule, `{"scopes":{"path":"*","host":"h"}}`, false}, // a sole scope is not asked
		{rule, `{"scopes":{"path":"*"},"lifetime":"60"}`, false},
		{rule, `{"scopes":{"path":"*"},"lifetime":900}`, false},
	} {
		err := tc.schema.Validate(instance(t, tc.answer))
		if (err == nil) != tc.valid {
			t.Errorf("%s: valid=%v, got %v", tc.answer, tc.valid, err)
		}
	}
}

func TestStageSchemasAreJSON(t *testing.T) {
	f := New(writeReq(), Options{SessionMemory: true})
	for _, st := range []Stage{StageChoice, StageRule} {
		if _, err := json.Marshal(f.Schema(st)); err != nil {
			t.Errorf("%s: %v", st, err)
		}
	}
}
