package ownership

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateManager checks a manager name that a command is about to write
// (an Apply entry's manager, a fieldManager parameter) as the apiserver
// checks fieldManager, with apimachinery's own ValidateFieldManager: at
// most 128 bytes, printable characters only. An empty name is refused too:
// the apiserver would name the manager after the user agent, or refuse an
// apply, and an entry written with no name can't be told apart.
func ValidateManager(name string) error {
	if name == "" {
		return errors.New("the manager name is empty: give one (as kubectl apply --field-manager takes)")
	}
	errs := validation.ValidateFieldManager(name, field.NewPath("fieldManager"))
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeTooLong:
			msgs = append(msgs, fmt.Sprintf("it is %d bytes long, more than the %d the apiserver takes", len(name), validation.FieldManagerMaxLength))
		default:
			msgs = append(msgs, e.Detail)
		}
	}
	return fmt.Errorf("%q is not a manager name the apiserver takes (printable characters only, at most %d bytes): %s",
		name, validation.FieldManagerMaxLength, strings.Join(msgs, "; "))
}

// ValidateGlob checks a manager glob before it is matched: a glob that no
// manager name can match, or that reads as a shell character class, would
// otherwise match nothing in silence.
func ValidateGlob(pattern string) error {
	switch {
	case pattern == "":
		return errors.New("give a manager name or glob, not an empty string")
	case strings.ContainsAny(pattern, "[]"):
		return fmt.Errorf("%q: a manager glob takes * and ? only, not [...] classes: write ? for one character", pattern)
	}
	return ValidateManager(pattern)
}
