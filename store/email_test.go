package store_test

import (
	"context"
	"errors"
	"io"
	"mime/quotedprintable"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/mail"
	"github.com/agora/agora/mail/mailtest"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// mailStore returns a store on b that sends mail through a loopback SMTP server (STARTTLS and
// AUTH), with a driven clock.
func mailStore(t *testing.T, b storetest.Backend) (*store.Store, *mailtest.Server, *storetest.Clock) {
	t.Helper()
	return mailStoreWith(t, b, store.Options{})
}

// mailStoreWith is mailStore with the settings of o besides those mailStore sets.
func mailStoreWith(t *testing.T, b storetest.Backend, o store.Options) (*store.Store, *mailtest.Server, *storetest.Clock) {
	t.Helper()
	srv := mailtest.Start(t)
	sender, err := mail.NewSMTP(srv.URL(), "agora@example.org", mail.SMTPOptions{TLS: srv.ClientTLS, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	clock := storetest.NewClock()
	o.Prefix, o.WriteLimit, o.Now = storetest.Prefix(), -1, clock.Now
	o.Mail = store.MailOptions{Sender: sender, PublicURL: "https://agora.example"}
	s := b.NewStore(t, o)
	return s, srv, clock
}

var tokenInMail = regexp.MustCompile(`token=([a-z0-9_-]+\.[A-Za-z0-9_-]{43})`)

// mailToken returns the token of the link in mail number i, failing when there are not i+1.
func mailToken(t *testing.T, srv *mailtest.Server, want int) string {
	t.Helper()
	mails := srv.Mails()
	if len(mails) != want {
		t.Fatalf("%d mails arrived, want %d", len(mails), want)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(strings.NewReader(mails[want-1].Data)))
	if err != nil {
		t.Fatal(err)
	}
	m := tokenInMail.FindStringSubmatch(string(body))
	if m == nil {
		t.Fatalf("no link in the mail:\n%s", mails[want-1].Data)
	}
	return m[1]
}

// TestPasswordResetBySMTP: an address is verified and a password reset through a real SMTP
// server: each mail arrives once, its link works once, and a reset link is refused at the
// second it expires.
func TestPasswordResetBySMTP(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, srv, clock := mailStore(t, b)
		first, err := s.SignUp(ctx, "ann", "password1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetEmail(ctx, "ann", "Ann@Example.org", "password1"); err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		settle(t, s) // a job that runs again sends nothing more
		if _, err := s.VerifyEmail(ctx, mailToken(t, srv, 1)); err != nil {
			t.Fatalf("verify: %v", err)
		}
		if addr, ok, err := s.Email(ctx, "ann"); err != nil || addr != "Ann@Example.org" || !ok {
			t.Fatalf("email = %q, %v, %v; want verified", addr, ok, err)
		}

		if err := s.RequestPasswordReset(ctx, "ann@example.ORG"); err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		token := mailToken(t, srv, 2)
		if m := srv.Mails()[1]; !strings.Contains(m.Data, "https://agora.example/reset-password?token=") ||
			!strings.Contains(m.Data, "text/html") || m.To[0] != "Ann@Example.org" {
			t.Errorf("reset mail:\n%s", m.Data)
		}
		sess, err := s.ResetPassword(ctx, token, "password2")
		if err != nil {
			t.Fatalf("reset: %v", err)
		}
		if _, err := s.Authenticate(ctx, sess.Token); err != nil {
			t.Errorf("the reset's session: %v", err)
		}
		if _, err := s.Authenticate(ctx, first.Token); !store.IsKind(err, store.KindUnauthenticated) {
			t.Errorf("the session before the reset: %v, want it ended", err)
		}
		if _, err := s.LogIn(ctx, "ann", "password2"); err != nil {
			t.Errorf("log in with the new password: %v", err)
		}
		if _, err := s.ResetPassword(ctx, token, "password3"); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("the link used again: %v, want invalid", err)
		}

		// A link expires at its second, exactly.
		if err := s.RequestPasswordReset(ctx, "ann@example.org"); err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		token = mailToken(t, srv, 3)
		clock.Add(time.Hour)
		if _, err := s.ResetPassword(ctx, token, "password3"); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("the link at its expiry: %v, want invalid", err)
		}
		if len(srv.Mails()) != 3 {
			t.Errorf("%d mails, want 3", len(srv.Mails()))
		}
	})
}

// TestPasswordResetUnknownAddress: a reset for an address no account has answers as for a known
// one, queues a job as one does, and sends nothing.
func TestPasswordResetUnknownAddress(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, srv, _ := mailStore(t, b)
		annWithAddress(t, s)
		for _, addr := range []string{"ann@example.org", "nobody@example.org"} {
			before, err := s.Jobs().Census(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.RequestPasswordReset(ctx, addr); err != nil {
				t.Fatalf("%s: %v", addr, err)
			}
			after, err := s.Jobs().Census(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if after.Due != before.Due+1 {
				t.Errorf("%s: %d jobs due, want %d", addr, after.Due, before.Due+1)
			}
			settle(t, s)
		}
		if n := len(srv.Mails()); n != 2 {
			t.Errorf("%d mails, want 2 (the verification and one reset)", n)
		}
	})
}

// TestMailRetried: a mail the SMTP server refuses is retried and arrives once.
func TestMailRetried(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, srv, clock := mailStore(t, b)
		if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
			t.Fatal(err)
		}
		srv.Refuse(2)
		if _, err := s.SetEmail(ctx, "ann", "ann@example.org", "password1"); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			settle(t, s)
			clock.Add(10 * time.Minute) // past the engine's backoff
		}
		mailToken(t, srv, 1)
		if dead, err := s.Jobs().Dead(ctx, 10); err != nil || len(dead) != 0 {
			t.Errorf("dead letters %v, %v; want none", dead, err)
		}
	})
}

// TestEmailRace: two accounts racing for one address (in different cases): one gets it, the
// other CONFLICT.
func TestEmailRace(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, _, _ := mailStore(t, b)
		names := []string{"ann", "bob"}
		for _, n := range names {
			if _, err := s.SignUp(ctx, n, "password1"); err != nil {
				t.Fatal(err)
			}
		}
		errs := make([]error, len(names))
		var wg sync.WaitGroup
		for i, n := range names {
			wg.Go(func() {
				_, errs[i] = s.SetEmail(ctx, store.UserKey(n), []string{"same@example.org", "SAME@example.org"}[i], "password1")
			})
		}
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case !store.IsKind(err, store.KindConflict):
				t.Errorf("%s: %v, want CONFLICT", names[i], err)
			}
		}
		if won != 1 {
			t.Fatalf("%d accounts got the address, want 1 (%v)", won, errs)
		}
		// The winner moves to another address: the first is free again.
		winner, loser := store.UserKey("ann"), store.UserKey("bob")
		if errs[0] != nil {
			winner, loser = loser, winner
		}
		if _, err := s.SetEmail(ctx, winner, "other@example.org", "password1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetEmail(ctx, loser, "same@example.org", "password1"); err != nil {
			t.Errorf("the address released: %v", err)
		}
	})
}

// dyingSender is the mail sender of a process that dies while it sends: it signals that it was
// called, and from then on its store's Redis connection fails every command (dead), so the
// process records nothing — not the send, not the job's outcome — as a killed one would not.
type dyingSender struct {
	called chan struct{}
	dead   *atomic.Bool
}

func (d dyingSender) Send(ctx context.Context, _ mail.Message) error {
	d.dead.Store(true)
	close(d.called)
	return errors.New("killed")
}

// TestMailSurvivesAKilledProcess: a process claims a mail job and dies before the mail leaves;
// the job's lease ends, another process claims it and sends the mail, and the mail arrives once.
func TestMailSurvivesAKilledProcess(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, srv, clock := mailStore(t, b)
		if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
			t.Fatal(err)
		}
		// The process that dies: the same Redis and prefix, its own connection.
		dead := new(atomic.Bool)
		client := b.NewClient(t)
		client.AddHook(storetest.Dying(dead, errors.New("process killed"), nil))
		dying := dyingSender{called: make(chan struct{}), dead: dead}
		doomed := storetest.Backend{Name: b.Name, Client: client}.NewStore(t, store.Options{
			Prefix: s.Options().Prefix, WriteLimit: -1, Now: clock.Now,
			Mail: store.MailOptions{Sender: dying, PublicURL: "https://agora.example"},
		})
		// The mail is queued through the live process, then claimed by the doomed one.
		if _, err := s.SetEmail(ctx, "ann", "ann@example.org", "password1"); err != nil {
			t.Fatal(err)
		}
		_, _ = doomed.Jobs().RunDue(ctx) // its connection dies mid-way: what it reports does not matter
		select {
		case <-dying.called:
		default:
			t.Fatal("the doomed process did not claim the mail job")
		}
		// Within the lease, the live process leaves the job alone.
		settle(t, s)
		if n := len(srv.Mails()); n != 0 {
			t.Fatalf("%d mails within the dead process's lease, want 0", n)
		}
		// After it, the live process sends the mail, once.
		clock.Add(time.Minute)
		for range 3 {
			settle(t, s)
			clock.Add(10 * time.Minute)
		}
		mailToken(t, srv, 1)
	})
}

// TestUnverifiedEmailClaimLapses: an address claimed by an account that never verifies it is
// the claimant's only until its first link expires (a new link does not renew the claim); then
// another account may take it, and the first account's links stop working. A verified address
// stays its account's. A link used in the instant between a takeover's two steps finds the claim
// gone and gives the address up.
func TestUnverifiedEmailClaimLapses(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, srv, clock := mailStore(t, b)
		for _, name := range []string{"squatter", "owner", "third"} {
			if _, err := s.SignUp(ctx, name, "password1"); err != nil {
				t.Fatal(err)
			}
		}
		const addr = "Owner@Example.org"
		if _, err := s.SetEmail(ctx, "squatter", addr, "password1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetEmail(ctx, "owner", addr, "password1"); !store.IsKind(err, store.KindConflict) {
			t.Fatalf("a fresh claim taken: %v, want CONFLICT", err)
		}
		clock.Add(23 * time.Hour)
		if _, err := s.SetEmail(ctx, "squatter", addr, "password1"); err != nil { // a new link
			t.Fatal(err)
		}
		settle(t, s)
		late := mailToken(t, srv, 2) // the squatter's second link, still valid for a day
		clock.Add(time.Hour)
		if _, err := s.SetEmail(ctx, "owner", addr, "password1"); err != nil {
			t.Fatalf("a lapsed unverified claim: %v, want it taken over", err)
		}
		if got, _, err := s.Email(ctx, "squatter"); err != nil || got != "" {
			t.Errorf("the squatter's address after the takeover: %q, %v; want none", got, err)
		}
		if _, err := s.VerifyEmail(ctx, late); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("the squatter's link after the takeover: %v, want invalid", err)
		}
		settle(t, s)
		if _, err := s.VerifyEmail(ctx, mailToken(t, srv, 3)); err != nil {
			t.Fatalf("the owner verifies: %v", err)
		}
		clock.Add(48 * time.Hour)
		if _, err := s.SetEmail(ctx, "third", addr, "password1"); !store.IsKind(err, store.KindConflict) {
			t.Errorf("a verified address taken: %v, want CONFLICT", err)
		}

		// The instant between a takeover's two steps: the third account's link is used after the
		// claim moved on, while its hash still holds the address.
		const other = "third@example.org"
		if _, err := s.SetEmail(ctx, "third", other, "password1"); err != nil {
			t.Fatal(err)
		}
		settle(t, s)
		link := mailToken(t, srv, 4)
		if err := b.Client.HSet(ctx, s.Options().Prefix+"{e:"+other+"}", "user", "squatter").Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.VerifyEmail(ctx, link); !store.IsKind(err, store.KindConflict) {
			t.Errorf("a link whose address's claim moved on: %v, want CONFLICT", err)
		}
		if got, ok, err := s.Email(ctx, "third"); err != nil || got != "" || ok {
			t.Errorf("the third account's address: %q verified %v, %v; want none", got, ok, err)
		}
	})
}

// annWithAddress signs ann up and gives her the address ann@example.org, and runs the due jobs:
// the link that verifies it is mailed (mailToken(t, srv, 1)).
func annWithAddress(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetEmail(ctx, "ann", "ann@example.org", "password1"); err != nil {
		t.Fatal(err)
	}
	settle(t, s)
}
