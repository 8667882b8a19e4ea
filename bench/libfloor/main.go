// Command libfloor is the floor program (bench/floor) linked with the
// libraries askperm must use (cobra, bubbletea, huh, x/term, go-isatty):
// their package initialisers and size are the part of askperm's start-up
// no change to askperm's own code can remove.
package main

import (
	"io"
	"os"

	_ "github.com/charmbracelet/bubbletea"
	_ "github.com/charmbracelet/huh"
	_ "github.com/mattn/go-isatty"
	_ "github.com/spf13/cobra"
	_ "golang.org/x/term"
)

func main() {
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		os.Exit(1)
	}
	os.Stdout.WriteString(`{"decision":"allow"}` + "\n")
}
