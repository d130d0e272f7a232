package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// unread is how many bytes written to the pipe f the reader has not read.
func unread(f *os.File) (int, error) {
	return unix.IoctlGetInt(int(f.Fd()), unix.TIOCINQ)
}
