// Command widthgen writes form's width_gen.go from the width tables in
// form/internal/widthgen/data (see package widthgen). form runs it with
// go generate.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/askperm/askperm/form/internal/widthgen"
)

func main() {
	data := flag.String("data", "internal/widthgen/data", "folder of the width tables")
	out := flag.String("o", "width_gen.go", "file to write")
	flag.Parse()
	ms, err := widthgen.Load(*data)
	if err == nil {
		var src []byte
		if src, err = widthgen.Source(ms); err == nil {
			err = os.WriteFile(*out, src, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "widthgen:", err)
		os.Exit(1)
	}
}
