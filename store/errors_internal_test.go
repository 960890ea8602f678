package store

import (
	"errors"
	"testing"
)

// TestConflictKinds checks that a name that is taken and a write that met concurrent changes are
// different kinds: the first is final, the second may be retried.
func TestConflictKinds(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want Kind
	}{
		{"name taken (signup.lua)", scriptError("signup", errors.New(`CONFLICT the name "alice" is taken`)), KindConflict},
		{"group exists (group_create.lua)", scriptError("group_create", errors.New("CONFLICT the group already exists")), KindConflict},
		{"thread kept changing", busyf("the thread of comment %s kept changing while it was being deleted; retry", "comment:1:2"), KindConcurrentChange},
		{"sessions kept starting", busyf("sessions kept starting while they were being ended; retry"), KindConcurrentChange},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !IsKind(c.err, c.want) {
				t.Fatalf("%v: kind %v, want %v", c.err, c.err.(*Error).Kind, c.want)
			}
		})
	}
}
