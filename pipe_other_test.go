//go:build !linux

package main

import (
	"os"
	"time"
)

// unread can't ask the pipe elsewhere than on Linux (CI's system): it
// gives the process a moment and says all was read.
func unread(*os.File) (int, error) {
	time.Sleep(500 * time.Millisecond)
	return 0, nil
}
