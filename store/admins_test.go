package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestAdminNamesCannotBeSquatted checks that the admins setting makes admins of accounts that
// existed when it first named them, never of an account signed up with a configured name later
// (also after a restart), and that the operator's grants reach every replica.
func TestAdminNamesCannotBeSquatted(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		prefix := storetest.Prefix()
		replica := func(admins ...string) *store.Store {
			return b.NewStore(t, store.Options{Prefix: prefix, Now: clk.Now, Admins: admins})
		}
		if _, err := replica().SignUp(ctx, "Root", "password1"); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Second)
		first := replica("root", "Late") // the setting names root, which exists, and late, which does not
		clk.Add(time.Second)
		sess, err := first.SignUp(ctx, "late", "password1") // a stranger takes the name
		if err != nil {
			t.Fatal(err)
		}
		if !first.IsAdmin("root") || first.IsAdmin("late") || sess.User.Admin {
			t.Fatalf("after the sign-up: root admin %v, late admin %v (%v); want root only",
				first.IsAdmin("root"), first.IsAdmin("late"), sess.User.Admin)
		}
		clk.Add(time.Second)
		second := replica("root", "late") // a restart, or another replica
		if !second.IsAdmin("root") || second.IsAdmin("late") {
			t.Fatalf("after a restart: root admin %v, late admin %v; want root only", second.IsAdmin("root"), second.IsAdmin("late"))
		}

		// The operator's grants, by command on one replica, reach the others.
		if err := second.GrantAdmin(ctx, "nobody"); !store.IsKind(err, store.KindNotFound) {
			t.Fatalf("grant to no account: %v", err)
		}
		if err := second.GrantAdmin(ctx, "LATE"); err != nil {
			t.Fatal(err)
		}
		if err := first.RefreshAdmins(ctx); err != nil {
			t.Fatal(err)
		}
		if !second.IsAdmin("late") || !first.IsAdmin("late") {
			t.Fatalf("after the grant: late admin %v here, %v on the other replica", second.IsAdmin("late"), first.IsAdmin("late"))
		}
		if in, err := first.LogIn(ctx, "late", "password1"); err != nil || !in.User.Admin {
			t.Fatalf("log-in after the grant: %+v, %v", in, err)
		}
		if _, granted := replica().Admins(); len(granted) != 1 || granted[0] != "late" {
			t.Fatalf("a new replica reads the grants %v", granted)
		}
		if err := first.RevokeAdmin(ctx, "late"); err != nil {
			t.Fatal(err)
		}
		if err := second.RefreshAdmins(ctx); err != nil {
			t.Fatal(err)
		}
		if first.IsAdmin("late") || second.IsAdmin("late") {
			t.Fatal("late is still an admin after the revocation")
		}
		if err := first.RevokeAdmin(ctx, "root"); !store.IsKind(err, store.KindInvalid) || !first.IsAdmin("root") {
			t.Fatalf("revoking an admin by the setting: %v", err)
		}
	})
}

// TestGrantAdminRefusesMissingAccounts: the operator's grant needs an account that exists; a
// name never signed up and a deleted account (whose marker keeps its creation time) are
// NOT_FOUND and grant nothing. Nor does the admins setting make an admin of a deleted account.
func TestGrantAdminRefusesMissingAccounts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: clk.Now, WriteLimit: -1})
		signUp(t, s, "ann", "gone")
		if err := s.DeleteAccount(ctx, "gone", "password1", false); err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		for _, tc := range []struct {
			name  string
			admin bool
		}{{"nobody", false}, {"gone", false}, {"GONE", false}, {"ann", true}} {
			err := s.GrantAdmin(ctx, tc.name)
			if tc.admin && err != nil || !tc.admin && !store.IsKind(err, store.KindNotFound) {
				t.Errorf("grant %s: %v, want success %v", tc.name, err, tc.admin)
			}
			if got := s.IsAdmin(store.UserKey(strings.ToLower(tc.name))); got != tc.admin {
				t.Errorf("%s admin after the grant: %v, want %v", tc.name, got, tc.admin)
			}
		}
		if _, granted := s.Admins(); len(granted) != 1 || granted[0] != "ann" {
			t.Errorf("granted %v, want [ann]", granted)
		}
		clk.Add(time.Second)
		named := b.NewStore(t, store.Options{Prefix: prefix, Now: clk.Now, Admins: []string{"gone"}})
		if configured, _ := named.Admins(); named.IsAdmin("gone") || len(configured) != 0 {
			t.Errorf("the admins setting names the deleted gone: admins %v", configured)
		}
	})
}
