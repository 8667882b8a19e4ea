// Command askperm-team is the NATS side of askperm's team mode, installed
// beside askperm: askperm runs it and never links the NATS client itself.
package main

import (
	"os"

	"github.com/askperm/askperm/internal/teamcmd"
)

func main() { os.Exit(teamcmd.Main(os.Args[1:])) }
