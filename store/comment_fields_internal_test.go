package store

import (
	"slices"
	"testing"
)

// TestCommentReadsAskNoBody: since layout 4 a comment's HMGET never asks its hash for the field
// body (no comment keeps it there since layout 3, and each field asked of a listpack costs a scan
// of it); a process that found an earlier layout at start-up asks for it with CommentBody only.
func TestCommentReadsAskNoBody(t *testing.T) {
	for fs := range AllCommentFields + 1 {
		for _, tc := range []struct {
			name string
			sets []commentFieldSet
			want bool
		}{
			{"layout 4", commentFieldSets, false},
			{"before layout 3", legacyCommentFieldSets, CommentFields(fs)&CommentBody != 0},
		} {
			set := tc.sets[fs]
			if got := slices.Contains(set.args, any("body")); got != tc.want {
				t.Errorf("%s: fields %b ask for body: %v, want %v (%v)", tc.name, fs, got, tc.want, set.args)
			}
			if len(set.args) != len(set.at) {
				t.Errorf("%s: fields %b: %d names, %d places", tc.name, fs, len(set.args), len(set.at))
			}
		}
	}
}
