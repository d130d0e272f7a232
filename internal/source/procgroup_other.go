//go:build !unix

package source

import (
	"os"
	"os/exec"
)

// ownProcessGroup does nothing where process groups are not Unix's: the
// companion alone is killed, and WaitDelay closes what a child of it
// still holds.
func ownProcessGroup(*exec.Cmd) {}

// killProcessGroup kills p.
func killProcessGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	return p.Kill()
}
