package main

import (
	"os"

	"github.com/askperm/askperm/cmd"
)

//go:generate go run ./internal/mangen docs/man

func main() { os.Exit(cmd.Main()) }
