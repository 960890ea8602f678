package store_test

import (
	"context"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestAdminsDeleteNoAdmin: deleteUser, an admin's deletion of someone else's account, refuses
// the account of a site admin (FORBIDDEN), as banUser does: an admin ends another's admin with
// `agora admin revoke`, the operator's command, and not by erasing their account. Their own
// account an admin may delete.
func TestAdminsDeleteNoAdmin(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Prefix: storetest.Prefix()})
		signUp(t, s, "root", "boss", "ann")
		for _, n := range []string{"root", "boss"} {
			if err := s.GrantAdmin(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.DeleteUser(ctx, "root", "boss", true); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("an admin deletes another admin: %v, want FORBIDDEN", err)
		}
		if u, err := s.NewLoader().User(ctx, "boss"); err != nil || u == nil {
			t.Fatalf("the admin after the refused deletion: %+v (%v), want the account", u, err)
		}
		if err := s.DeleteUser(ctx, "root", "ann", false); err != nil {
			t.Fatalf("an admin deletes a user: %v", err)
		}
		if err := s.DeleteUser(ctx, "root", "root", false); err != nil {
			t.Fatalf("an admin deletes their own account: %v", err)
		}
	})
}
