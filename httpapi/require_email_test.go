package httpapi_test

import (
	"context"
	"regexp"
	"sync"
	"testing"

	"github.com/agora/agora/mail"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// mailbox is a mail.Sender that keeps what it is given.
type mailbox struct {
	mu   sync.Mutex
	sent []mail.Message
}

func (m *mailbox) Send(_ context.Context, msg mail.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, msg)
	return nil
}

var linkToken = regexp.MustCompile(`token=([a-z0-9_-]+\.[A-Za-z0-9_-]{43})`)

// lastToken runs the due mail jobs of a and returns the token of the last mail's link.
func (m *mailbox) lastToken(t *testing.T, a *api) string {
	t.Helper()
	if _, err := a.store.Jobs().RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sent) == 0 {
		t.Fatal("no mail sent")
	}
	match := linkToken.FindStringSubmatch(m.sent[len(m.sent)-1].Text)
	if match == nil {
		t.Fatalf("no link in %q", m.sent[len(m.sent)-1].Text)
	}
	return match[1]
}

// TestAPIRequireEmail: on a server that requires an email address, signUp without one is
// BAD_USER_INPUT, an unverified account's writes are EMAIL_UNVERIFIED while setEmail works, and
// a verified account's post costs the round trips it costs on a server that does not (the
// check reads in the round trip of the write's rate limit).
func TestAPIRequireEmail(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		counted, rt := b.Counted(t)
		box := &mailbox{}
		opts := store.Options{WriteLimit: -1, Mail: store.MailOptions{Sender: box}}
		plain := newAPI(t, counted, opts)
		opts.RequireEmail = true
		a := newAPI(t, counted, opts)

		const signUp = `mutation($n:String!,$e:String){signUp(name:$n,password:"password1",email:$e){token}}`
		if r := a.do("", signUp, map[string]any{"n": "ann"}); r.code() != "BAD_USER_INPUT" {
			t.Fatalf("signUp without email: %s %+v, want BAD_USER_INPUT", r.Data, r.Errors)
		}
		var d struct{ SignUp struct{ Token string } }
		a.do("", signUp, map[string]any{"n": "ann", "e": "ann@example.org"}).decode(t, &d)
		ann := d.SignUp.Token
		const me = `{user(name:"ann"){email emailVerified}}`
		if r := a.do(ann, me, nil); string(r.Data) != `{"user":{"email":"ann@example.org","emailVerified":false}}` {
			t.Fatalf("signed up as %s %+v", r.Data, r.Errors)
		}
		const post = `mutation{createPost(input:{title:"hello",groups:["g"]}){id}}`
		if r := a.do(ann, post, nil); r.code() != "EMAIL_UNVERIFIED" {
			t.Fatalf("an unverified account's post: %s %+v, want EMAIL_UNVERIFIED", r.Data, r.Errors)
		}
		box.lastToken(t, a) // the sign-up's link, unused: setEmail sends another
		if r := a.do(ann, `mutation{setEmail(email:"Ann@example.org",password:"password1"){email}}`, nil); len(r.Errors) > 0 {
			t.Fatalf("setEmail: %+v", r.Errors)
		}
		if r := a.do("", `mutation($t:String!){verifyEmail(token:$t){id}}`, map[string]any{"t": box.lastToken(t, a)}); len(r.Errors) > 0 {
			t.Fatalf("verifyEmail: %+v", r.Errors)
		}
		if r := a.do(ann, me, nil); string(r.Data) != `{"user":{"email":"Ann@example.org","emailVerified":true}}` {
			t.Fatalf("verified: %s %+v", r.Data, r.Errors)
		}

		bob, _ := plain.signUp("bob")
		trips := func(a *api, token string) int64 {
			t.Helper()
			a.createPost(token, "warm", "g")
			rt.Reset()
			if r := a.do(token, post, nil); len(r.Errors) > 0 {
				t.Fatalf("post: %+v", r.Errors)
			}
			return rt.Count()
		}
		if with, without := trips(a, ann), trips(plain, bob); with != without {
			t.Errorf("a post costs %d round trips with -require-email, %d without", with, without)
		}
	})
}
