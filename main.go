package main

import (
	"os"

	"github.com/askperm/askperm/cmd"
)

func main() { os.Exit(cmd.Main()) }
