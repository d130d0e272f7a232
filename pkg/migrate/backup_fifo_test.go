//go:build unix

package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A backup that is a FIFO, or a symlink to one, is refused at once:
// opening it would wait for a writer that never comes.
func TestReadBackupFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "l.json")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, link} {
		if _, err := readBackup(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: got %v", p, err)
		}
	}
}
