// Package docs holds askperm's documentation and the JSON Schemas
// (draft 2020-12) of its request, decision and answers files, embedded so
// that `askperm schema NAME` prints exactly what is committed here.
package docs

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

//go:embed *.schema.json
var schemas embed.FS

// Schema returns the JSON Schema called name ("request", "decision", ...).
func Schema(name string) ([]byte, error) {
	b, err := schemas.ReadFile(name + ".schema.json")
	if err != nil {
		return nil, fmt.Errorf("unknown schema %q (known: %s)", name, strings.Join(SchemaNames(), ", "))
	}
	return b, nil
}

// SchemaNames lists the embedded schemas.
func SchemaNames() []string {
	entries, _ := schemas.ReadDir(".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".schema.json"))
	}
	sort.Strings(names)
	return names
}
