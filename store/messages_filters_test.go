package store_test

import (
	"context"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestSiteFiltersApplyToMessages: a private message's body passes the site filters, sent and
// edited: refused under REFUSE (FILTERED, nothing sent), starred under REPLACE.
func TestSiteFiltersApplyToMessages(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{WriteLimit: -1})
		signUp(t, s, "root", "ann", "bob")
		if err := s.GrantAdmin(ctx, "root"); err != nil {
			t.Fatal(err)
		}
		words, domains := []string{"darn"}, []string{}
		if _, err := s.UpdateSiteFilters(ctx, "root", &words, &domains, store.FilterRefuse); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SendMessage(ctx, "ann", "bob", "well darn it", ""); !store.IsKind(err, store.KindFiltered) {
			t.Fatalf("a filtered message: %v, want FILTERED", err)
		}
		m, err := s.SendMessage(ctx, "ann", "bob", "hello", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.EditMessage(ctx, "ann", m.ID, "darn"); !store.IsKind(err, store.KindFiltered) {
			t.Fatalf("a filtered edit: %v, want FILTERED", err)
		}
		if _, err := s.UpdateSiteFilters(ctx, "root", &words, &domains, store.FilterReplace); err != nil {
			t.Fatal(err)
		}
		if m, err = s.SendMessage(ctx, "ann", "bob", "well darn it", ""); err != nil || m.Text != "well **** it" {
			t.Fatalf("a replaced message: %+v, %v; want %q", m, err, "well **** it")
		}
		if m, err = s.EditMessage(ctx, "ann", m.ID, "darn again"); err != nil || m.Text != "**** again" {
			t.Fatalf("a replaced edit: %+v, %v; want %q", m, err, "**** again")
		}
	})
}
