// Package cmd holds kubectl-ssa's cobra commands, one file per command:
// raw flags turned into options, validation, the call into internal/kube
// and the pkg/ libraries, printing and exit codes. It does no SSA logic and
// no cluster access of its own.
package cmd
