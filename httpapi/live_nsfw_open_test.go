package httpapi_test

import (
	"fmt"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestNSFWSettingAppliesToOpenStreams: once a reader stops showing NSFW posts, the live streams
// they already have open stop delivering them, on every transport: postPublished leaves them out
// (also in an execution shared with a reader who still shows them, who keeps getting them), and
// postChanged of an NSFW post read by id, in an execution of her own (it reads a viewer field),
// comes withheld.
func TestNSFWSettingAppliesToOpenStreams(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := serve(t, b.NewStore(t, store.Options{WriteLimit: -1}), httpapi.Live{})
		alice, _ := a.signUp("alice")
		dave, _ := a.signUp("dave")
		carol, _ := a.signUp("carol")
		setShow := func(token string, show bool) {
			t.Helper()
			if r := a.do(token, `mutation($s:Boolean!){updateProfile(showNsfw:$s){showNsfw}}`, map[string]any{"s": show}); len(r.Errors) > 0 {
				t.Fatalf("updateProfile: %+v", r.Errors)
			}
		}
		setShow(dave, true)
		post := func(title string, nsfw bool) string {
			t.Helper()
			var d struct{ CreatePost struct{ ID string } }
			a.do(carol, `mutation($t:String!,$n:Boolean!){createPost(input:{title:$t,body:"b",nsfw:$n}){id}}`,
				map[string]any{"t": title, "n": nsfw}).decode(t, &d)
			return d.CreatePost.ID
		}
		watched := post("watched", true)
		const published = `subscription { postPublished { title } }`
		const changed = `subscription($p: ID!) { postChanged(postId: $p) { title nsfwHidden viewerWatch } }`
		for n, proto := range protos {
			t.Run(proto, func(t *testing.T) {
				setShow(alice, true)
				alicePub := subscribe(t, a.srv.URL, proto, alice, published, nil)
				davePub := subscribe(t, a.srv.URL, proto, dave, published, nil)
				aliceChanged := subscribe(t, a.srv.URL, proto, alice, changed, map[string]any{"p": watched})
				defer func() {
					for _, s := range []sub{alicePub, davePub, aliceChanged} {
						s.close()
					}
					waitSubscribers(t, a, 0)
				}()
				waitSubscribers(t, a, 3)
				title := func(s sub) string {
					t.Helper()
					var d struct{ PostPublished struct{ Title string } }
					next(t, s, &d)
					return d.PostPublished.Title
				}
				// round publishes an NSFW post, then one that is not, and reports whether the
				// NSFW one reached s before the other; dave, who shows NSFW posts, gets both.
				round := 0
				nsfwCame := func(s sub) bool {
					t.Helper()
					round++
					nsfw, sfw := fmt.Sprintf("nsfw %d.%d", n, round), fmt.Sprintf("sfw %d.%d", n, round)
					post(nsfw, true)
					post(sfw, false)
					if got, got2 := title(davePub), title(davePub); got != nsfw || got2 != sfw {
						t.Fatalf("round %d: dave got %q, %q; want %q, %q", round, got, got2, nsfw, sfw)
					}
					switch got := title(s); got {
					case sfw:
						return false
					case nsfw:
						if got := title(s); got != sfw {
							t.Fatalf("round %d: got %q after the NSFW post, want %q", round, got, sfw)
						}
						return true
					default:
						t.Fatalf("round %d: got %q, want %q or %q", round, got, nsfw, sfw)
						return false
					}
				}
				if !nsfwCame(alicePub) {
					t.Fatal("an NSFW post did not reach alice while she showed them")
				}
				setShow(alice, false)
				for nsfwCame(alicePub) {
					if round > 50 {
						t.Fatal("NSFW posts still reach alice's open stream 50 rounds after she stopped showing them")
					}
				}
				if nsfwCame(alicePub) {
					t.Fatal("an NSFW post reached alice's open stream after her setting had applied")
				}
				// postChanged of the NSFW post she asked for by id: withheld now.
				a.do(dave, `mutation($p:ID!){votePost(postId:$p,direction:UP){id}}`, map[string]any{"p": watched}).decode(t, &struct{}{})
				var last struct {
					PostChanged struct {
						Title      string
						NsfwHidden bool
					}
				}
				for range 2 { // the event of her setting's round may come first
					next(t, aliceChanged, &last)
					if last.PostChanged.NsfwHidden {
						break
					}
				}
				if !last.PostChanged.NsfwHidden || last.PostChanged.Title != "" {
					t.Errorf("postChanged after alice stopped showing NSFW posts: %+v, want it withheld", last.PostChanged)
				}
				a.do(dave, `mutation($p:ID!){votePost(postId:$p,direction:NONE){id}}`, map[string]any{"p": watched}).decode(t, &struct{}{})
				next(t, aliceChanged, &last)
			})
		}
	})
}
