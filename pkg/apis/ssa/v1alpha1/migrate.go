package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DryRun is the value of --dry-run.
type DryRun string

// Dry-run modes, as kubectl's.
const (
	DryRunNone   DryRun = "none"
	DryRunClient DryRun = "client"
	DryRunServer DryRun = "server"
)

// Enabled tells whether nothing is to be stored.
func (d DryRun) Enabled() bool { return d == DryRunClient || d == DryRunServer }

// MigrationMode is what a migration does.
type MigrationMode string

// The modes of a migration.
const (
	// MigrateCSA moves client-side apply's entries to the target applier.
	MigrateCSA MigrationMode = "csa"
	// MigrateRename renames or merges managers into the target.
	MigrateRename MigrationMode = "rename"
	// MigrateRelease drops managers' entries: they own nothing afterwards.
	MigrateRelease MigrationMode = "release"
	// MigrateAPIVersions rewrites entries recorded at apiVersions the server
	// no longer serves to the object's apiVersion.
	MigrateAPIVersions MigrationMode = "apiversions"
	// MigrateUndo restores managedFields from backups.
	MigrateUndo MigrationMode = "undo"
)

// MigrationChange is one managedFields entry's fate.
type MigrationChange struct {
	Manager     string      `json:"manager"`
	Operation   Operation   `json:"operation"`
	Subresource Subresource `json:"subresource"`
	APIVersion  string      `json:"apiVersion"`
	Change      string      `json:"change"`
}

// ObjectResult is one object's outcome.
type ObjectResult struct {
	Object   ObjectRef         `json:"object"`
	Result   MigrationResult   `json:"result"`
	Reason   string            `json:"reason"`
	Changes  []MigrationChange `json:"changes"`
	Findings []string          `json:"findings"`
	// Before and After are set by client dry runs, for the diff.
	Before []metav1.ManagedFieldsEntry `json:"managedFieldsBefore,omitempty"`
	After  []metav1.ManagedFieldsEntry `json:"managedFieldsAfter,omitempty"`
	Backup string                      `json:"backup,omitempty"`
}

// MigrationSummary counts outcomes.
type MigrationSummary struct {
	Scanned   int `json:"scanned"`
	Migrated  int `json:"migrated"`
	Unchanged int `json:"unchanged"`
	Skipped   int `json:"skipped"`
	Failed    int `json:"failed"`
}

// MigrationReport is a migration's report.
type MigrationReport struct {
	TypeMeta
	Mode         MigrationMode    `json:"mode"`
	FieldManager string           `json:"fieldManager"`
	DryRun       DryRun           `json:"dryRun"`
	Check        bool             `json:"check"`
	BackupDir    string           `json:"backupDir"`
	Summary      MigrationSummary `json:"summary"`
	// Unlisted are the kinds that could not be listed (forbidden, ...):
	// their objects were not looked at.
	Unlisted []string       `json:"unlisted"`
	Objects  []ObjectResult `json:"objects"`
}

// MigrationResult is one object's outcome.
type MigrationResult string

// The results.
const (
	ResultMigrated     MigrationResult = "migrated"
	ResultWouldMigrate MigrationResult = "would-migrate" // a dry run
	ResultUnchanged    MigrationResult = "unchanged"
	ResultSkipped      MigrationResult = "skipped"
	ResultFailed       MigrationResult = "failed"
	ResultNeedsWork    MigrationResult = "needs-migration" // --check
)
