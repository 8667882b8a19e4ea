package main

import (
	"os"

	"github.com/askperm/askperm/cmd"
)

//go:generate env ASKPERM_UPDATE_MAN=1 go test -count=1 -run ^TestManPages$ ./cmd

func main() { os.Exit(cmd.Main()) }
