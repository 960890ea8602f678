package store_test

import (
	"context"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestRequireEmail: with Options.RequireEmail, sign-up needs an address, and an account writes
// (posts, comments, votes) only once it verified one, while it may still set its address; an
// admin is exempt. Without it, an address is optional and nothing is refused.
func TestRequireEmail(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, srv, _ := mailStoreWith(t, b, store.Options{RequireEmail: true})
		mails := 0
		verify := func(t *testing.T) {
			t.Helper()
			settle(t, s)
			mails++
			if _, err := s.VerifyEmail(ctx, mailToken(t, srv, mails)); err != nil {
				t.Fatalf("verify: %v", err)
			}
		}
		if _, err := s.SignUp(ctx, "ann", "password1"); !store.IsKind(err, store.KindInvalid) {
			t.Fatalf("sign-up without an address: %v, want BAD_USER_INPUT", err)
		}
		if _, err := s.SignUpWithEmail(ctx, "ann", "password1", "not an address"); !store.IsKind(err, store.KindInvalid) {
			t.Fatalf("sign-up with a bad address: %v, want BAD_USER_INPUT", err)
		}
		if _, err := s.SignUpWithEmail(ctx, "bob", "password1", "bob@example.org"); err != nil {
			t.Fatal(err)
		}
		verify(t)
		post, err := s.CreatePost(ctx, "bob", store.NewPost{Title: "hello", Groups: []string{"g"}})
		if err != nil {
			t.Fatalf("a verified account's post: %v", err)
		}
		// A name that is taken claims no address: the next try with another name gets it.
		if _, err := s.SignUpWithEmail(ctx, "Bob", "password2", "Ann@Example.org"); !store.IsKind(err, store.KindConflict) {
			t.Fatalf("sign-up with a taken name: %v, want CONFLICT", err)
		}
		sess, err := s.SignUpWithEmail(ctx, "ann", "password1", "Ann@Example.org")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SignUpWithEmail(ctx, "eve", "password1", "ann@example.ORG"); !store.IsKind(err, store.KindConflict) {
			t.Fatalf("sign-up with a taken address: %v, want CONFLICT", err)
		}
		if addr, ok, err := s.Email(ctx, "ann"); err != nil || addr != "Ann@Example.org" || ok {
			t.Fatalf("email = %q, %v, %v; want Ann@Example.org unverified", addr, ok, err)
		}
		comment, err := s.CreateComment(ctx, "bob", store.NewComment{PostID: post.ID, Body: "first"})
		if err != nil {
			t.Fatal(err)
		}

		writes := []struct {
			name  string
			write func() error
		}{
			{"createPost", func() error {
				_, err := s.CreatePost(ctx, "ann", store.NewPost{Title: "mine", Groups: []string{"g"}})
				return err
			}},
			{"createComment", func() error {
				_, err := s.CreateComment(ctx, "ann", store.NewComment{PostID: post.ID, Body: "hi"})
				return err
			}},
			{"votePost", func() error { _, err := s.VotePost(ctx, "ann", post.ID, 1); return err }},
			{"voteComment", func() error { _, err := s.VoteComment(ctx, "ann", comment.ID, 1); return err }},
		}
		for _, w := range writes {
			if err := w.write(); !store.IsKind(err, store.KindEmailUnverified) {
				t.Errorf("%s by an unverified account: %v, want EMAIL_UNVERIFIED", w.name, err)
			}
		}
		// The sign-up's link is not used; a new address mails a new one.
		settle(t, s)
		mails++
		if _, err := s.SetEmail(ctx, "ann", "ann2@example.org", "password1"); err != nil {
			t.Fatalf("setEmail of an unverified account: %v", err)
		}
		verify(t)
		for _, w := range writes {
			if err := w.write(); err != nil {
				t.Errorf("%s once verified: %v", w.name, err)
			}
		}
		if _, err := s.Authenticate(ctx, sess.Token); err != nil {
			t.Fatal(err)
		}

		// A site admin writes without an address.
		if _, err := s.SignUpWithEmail(ctx, "root", "password1", "root@example.org"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreatePost(ctx, "root", store.NewPost{Title: "rules", Groups: []string{"g"}}); !store.IsKind(err, store.KindEmailUnverified) {
			t.Fatalf("root's post before the grant: %v, want EMAIL_UNVERIFIED", err)
		}
		if err := s.GrantAdmin(ctx, "root"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreatePost(ctx, "root", store.NewPost{Title: "rules", Groups: []string{"g"}}); err != nil {
			t.Fatalf("an admin's post: %v", err)
		}
	})
}

// TestEmailOptional: without Options.RequireEmail, sign-up takes an address or none, and
// unverified accounts write.
func TestEmailOptional(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, srv, _ := mailStore(t, b)
		if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SignUpWithEmail(ctx, "bob", "password1", "bob@example.org"); err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		mailToken(t, srv, 1) // bob's verification link
		if addr, ok, err := s.Email(ctx, "bob"); err != nil || addr != "bob@example.org" || ok {
			t.Fatalf("email = %q, %v, %v; want bob@example.org unverified", addr, ok, err)
		}
		for _, u := range []store.UserKey{"ann", "bob"} {
			p, err := s.CreatePost(ctx, u, store.NewPost{Title: "hello", Groups: []string{"g"}})
			if err != nil {
				t.Fatalf("%s's post: %v", u, err)
			}
			if _, err := s.CreateComment(ctx, u, store.NewComment{PostID: p.ID, Body: "hi"}); err != nil {
				t.Fatalf("%s's comment: %v", u, err)
			}
		}
	})
}
