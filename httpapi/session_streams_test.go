package httpapi_test

import (
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// endedBySession checks that s, a subscription of a session that ended, ended: a WebSocket
// closed with 4403, an event stream ended with UNAUTHENTICATED.
func endedBySession(t *testing.T, what string, s sub) {
	t.Helper()
	switch s := s.(type) {
	case wsSub:
		if code := s.c.closeStatus(t); code != httpapi.CloseForbidden {
			t.Errorf("%s: the socket closed with %d, want %d", what, code, httpapi.CloseForbidden)
		}
	case *sseClient:
		var last response
		for {
			r, done := s.result(t)
			if done {
				break
			}
			last = r
		}
		if last.code() != httpapi.CodeUnauthenticated {
			t.Errorf("%s: the stream ended after %+v, want %s", what, last, httpapi.CodeUnauthenticated)
		}
	}
}

// TestSessionEndEndsItsStreams: a token's streams end with its session — changePassword and
// logOutEverywhere from another session, logOut of its own — on every replica: a stolen token's
// subscriptions do not outlive a password reset. The session that changed the password, and
// other users, keep theirs.
func TestSessionEndEndsItsStreams(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		addr := addrOf(t, b)
		a := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{})
		peer := peerOf(t, a, addr)
		servers := []*api{a, peer}
		stolen, _ := a.signUp("alice")
		var in struct{ LogIn struct{ Token string } }
		logIn := `mutation($p:String!){logIn(name:"alice",password:$p){token}}`
		a.do("", logIn, map[string]any{"p": "password1"}).decode(t, &in)
		owner := in.LogIn.Token
		bob, _ := a.signUp("bob")
		carol, _ := a.signUp("carol")
		post := a.createPost(bob, "watched")
		q := `subscription($p:ID!){postChanged(postId:$p){id upvotes}}`
		vars := map[string]any{"p": post}
		open := func(token string) []sub { // one stream per transport, spread over both servers
			var subs []sub
			for i, proto := range protos {
				subs = append(subs, subscribe(t, servers[i%2].srv.URL, proto, token, q, vars))
			}
			return subs
		}
		count := map[*api]int{}
		wait := func(delta int) {
			t.Helper()
			for i := range protos {
				count[servers[i%2]] += delta
			}
			for _, s := range servers {
				waitSubscribers(t, s, count[s])
			}
		}
		stolenSubs, ownerSubs, bobSubs := open(stolen), open(owner), open(bob)
		wait(3)
		vote := func(dir string) {
			a.do(carol, `mutation($p:ID!,$d:VoteDirection!){votePost(postId:$p,direction:$d){id}}`,
				map[string]any{"p": post, "d": dir}).decode(t, &struct{}{})
		}
		stillLive := func(what string, subs []sub) {
			t.Helper()
			for _, s := range subs {
				var d struct{ PostChanged struct{ ID string } }
				next(t, s, &d)
				if d.PostChanged.ID != post {
					t.Errorf("%s: event %+v", what, d)
				}
			}
		}

		// The owner changes the password: the stolen token's streams end, the owner's go on.
		var changed struct{ ChangePassword bool }
		peer.do(owner, `mutation{changePassword(current:"password1",new:"password2")}`, nil).decode(t, &changed)
		for i, s := range stolenSubs {
			endedBySession(t, "stolen "+protos[i], s)
		}
		wait(-1)
		vote("UP")
		stillLive("the owner's streams after changePassword", ownerSubs)
		stillLive("bob's streams after alice's changePassword", bobSubs)

		// logOut ends the streams of the session that logged out.
		a.do("", logIn, map[string]any{"p": "password2"}).decode(t, &in)
		other := in.LogIn.Token
		otherSubs := open(other)
		wait(1)
		a.do(other, `mutation{logOut}`, nil).decode(t, &struct{}{})
		for i, s := range otherSubs {
			endedBySession(t, "logged out "+protos[i], s)
		}
		wait(-1)

		// logOutEverywhere ends the owner's streams too, and nobody else's.
		a.do(owner, `mutation{logOutEverywhere}`, nil).decode(t, &struct{}{})
		for i, s := range ownerSubs {
			endedBySession(t, "owner "+protos[i], s)
		}
		wait(-1)
		vote("DOWN")
		stillLive("bob's streams after alice's logOutEverywhere", bobSubs)
		for _, s := range bobSubs {
			s.close()
		}
		wait(-1)
	})
}
