package store_test

import (
	"testing"

	"github.com/agora/agora/store"
)

func TestNormalizeGroupName(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" for refused
	}{
		{"Kotlin", "kotlin"},
		{"go_lang-2", "go_lang-2"},
		{"\u212Aotlin", ""},   // KELVIN SIGN would fold to "k" under Unicode rules
		{"\u0130stanbul", ""}, // LATIN CAPITAL I WITH DOT ABOVE folds to "i̇"
		{"ſtuff", ""},         // LONG S
		{"", ""},
		{"has space", ""},
		{"a-very-long-group-name-that-is-over-32", ""},
	} {
		got, err := store.NormalizeGroupName(tc.in)
		if tc.want == "" {
			if !store.IsKind(err, store.KindInvalid) {
				t.Errorf("%q: %q, %v; want BAD_USER_INPUT", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
