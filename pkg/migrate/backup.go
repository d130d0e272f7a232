package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// BackupFormat marks a file as a kubectl-ssa backup: undo reads no other.
const BackupFormat = "kubectl-ssa.io/managedfields-backup/v1"

// Backup is what a backup file holds. LastApplied is kept only when the
// migration removed the annotation (undo restores it); the file is
// written with mode 0600 as it may hold a Secret's last-applied data.
type Backup struct {
	Format          string                      `json:"format"`
	Resource        schema.GroupVersionResource `json:"resource"`
	Kind            string                      `json:"kind"`
	Namespaced      bool                        `json:"namespaced"`
	Namespace       string                      `json:"namespace"`
	Name            string                      `json:"name"`
	UID             string                      `json:"uid"`
	ResourceVersion string                      `json:"resourceVersion"`
	ManagedFields   []metav1.ManagedFieldsEntry `json:"managedFields"`
	LastApplied     *string                     `json:"lastApplied,omitempty"`
	Migrated        []metav1.ManagedFieldsEntry `json:"migratedManagedFields"`
}

// MaxBackupSize caps the read of a backup file: a backup is one object's
// metadata, a few MiB at most; a file past it (or a device such as
// /dev/zero behind a symlink) is refused, never read whole.
const MaxBackupSize = 16 << 20

// errForeign marks a JSON file without kubectl-ssa's format marker:
// another tool's file in the directory, left alone.
var errForeign = errors.New("not a kubectl-ssa backup")

// readBackup reads and decodes the backup at path. A file that is valid
// JSON without the format marker is errForeign (undo leaves it alone);
// any other failure (not a regular file, too large, unreadable, not
// JSON, a marked file that does not decode) is a backup undo cannot
// restore, and is reported.
func readBackup(path string) (Backup, error) {
	var b Backup
	// Checked before opening, and opened without blocking: opening a
	// FIFO (or a symlink to one) waits for a writer.
	if st, err := os.Stat(path); err != nil {
		return b, err
	} else if !st.Mode().IsRegular() {
		return b, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return b, err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return b, err
	}
	if !st.Mode().IsRegular() {
		return b, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBackupSize+1))
	if err != nil {
		return b, err
	}
	if len(data) > MaxBackupSize {
		return b, fmt.Errorf("%s is larger than %d MiB: not a backup", path, MaxBackupSize>>20)
	}
	var marker struct {
		Format *string `json:"format"`
	}
	if err := json.Unmarshal(data, &marker); err != nil {
		return b, fmt.Errorf("%s is not a kubectl-ssa backup (corrupt: %w)", path, err)
	}
	if marker.Format == nil || *marker.Format != BackupFormat {
		return b, errForeign
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return b, fmt.Errorf("%s is a corrupt kubectl-ssa backup: %w", path, err)
	}
	return b, nil
}

func backupPath(dir string, it Item, m *metav1.PartialObjectMetadata) string {
	g := it.Resource.GVR.Group
	if g == "" {
		g = "core"
	}
	ns := m.Namespace
	if ns == "" {
		ns = "_cluster"
	}
	return filepath.Join(dir, g+"."+it.Resource.GVR.Version+"."+it.Resource.GVR.Resource, ns, m.Name+".json")
}

func writeBackup(dir string, it Item, m *metav1.PartialObjectMetadata, p *Plan) (string, error) {
	b := Backup{Format: BackupFormat, Resource: it.Resource.GVR, Kind: it.Resource.Kind, Namespaced: it.Resource.Namespaced, Namespace: m.Namespace, Name: m.Name,
		UID: string(m.UID), ResourceVersion: m.ResourceVersion, ManagedFields: m.ManagedFields, Migrated: p.After}
	if p.RemoveLastApplied {
		if s, ok := m.Annotations[ownership.LastAppliedAnnotation]; ok {
			b.LastApplied = &s
		}
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return "", err
	}
	path := backupPath(dir, it, m)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	// An earlier run's backup of the object is never overwritten: undo
	// would restore the state between the two runs, not the original.
	exists := fmt.Errorf("%s already holds a backup of %s %s from an earlier run: use another --backup-dir, or migrate undo first", dir, strings.ToLower(it.Resource.Kind), objectName(m))
	if _, err := os.Lstat(path); err == nil {
		return "", exists
	}
	if err := writeFileAtomic(path, data); err != nil {
		if errors.Is(err, os.ErrExist) {
			return "", exists
		}
		return "", err
	}
	return path, nil
}

func objectName(m *metav1.PartialObjectMetadata) string {
	if m.Namespace == "" {
		return m.Name
	}
	return m.Namespace + "/" + m.Name
}

// writeFileAtomic writes data to a new file of a random name in path's
// directory (os.CreateTemp: never a file or symlink planted there), mode
// 0600, then renames it to path; on any failure the temporary file is
// removed.
func writeFileAtomic(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	// CreateTemp makes the file 0600 already; said again in case of an
	// unusual umask handling.
	if err = f.Chmod(0o600); err != nil {
		_ = f.Close()
		return err
	}
	if _, err = f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err = f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	// A hard link fails when path exists (never replaces a file put
	// there meanwhile); where links are not supported, a rename.
	if err = os.Link(tmp, path); err == nil {
		return os.Remove(tmp)
	}
	if errors.Is(err, os.ErrExist) {
		return err
	}
	return os.Rename(tmp, path)
}
