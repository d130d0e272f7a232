package cmd

import "testing"

func TestGoValuesAreHidden(t *testing.T) {
	tests := []struct{ in, want string }{
		{"failed to compare objects: expected objects of the same type, but got {0x1b8e2a0 0xc000a1b2c0}", "failed to compare objects: expected objects of the same type, but got …"},
		{"at 0xc000123456: broken", "at …: broken"},
		{"port 0x50 and {a b}", "port 0x50 and {a b}"},
	}
	for _, tt := range tests {
		if got := goValues.ReplaceAllString(tt.in, "…"); got != tt.want {
			t.Errorf("%q -> %q, want %q", tt.in, got, tt.want)
		}
	}
}
