package migrate

import (
	"encoding/json"
	"os"
	"path/filepath"

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

// isBackup tells whether a file is a kubectl-ssa backup, by its format
// marker: other JSON files in the directory are not touched.
func isBackup(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var b struct {
		Format string `json:"format"`
	}
	return json.Unmarshal(data, &b) == nil && b.Format == BackupFormat
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
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return "", err
	}
	// A file left by an earlier run keeps its mode through WriteFile.
	if err := os.Chmod(tmp, 0o600); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}
