package httpapi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestFeedResumeReadsFollowsAPageAtATime resumes alice's feed, on every transport, from before a
// backlog of new posts by someone she does not follow, then one by someone she does: the catch-up
// walks every new post of the site since the cursor, and read whether she follows each post's
// author apart, one command per post (10,000 kept posts: 10,000 round trips per resumed feed,
// none of them waiting for the client, since a skipped post is not delivered). It now reads the
// follows of a page's authors at once.
func TestFeedResumeReadsFollowsAPageAtATime(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		b, trips := b.Counted(t)
		st := b.NewStore(t, store.Options{})
		a := serve(t, st, httpapi.Live{})
		ctx := context.Background()
		users := map[string]store.UserKey{}
		tokens := map[string]string{}
		for _, name := range []string{"alice", "bob", "carol"} {
			token, id := a.signUp(name)
			u, err := store.ParseUserID(id)
			if err != nil {
				t.Fatal(err)
			}
			users[name], tokens[name] = u, token
		}
		if _, err := st.Follow(ctx, users["alice"], users["bob"]); err != nil {
			t.Fatal(err)
		}
		head, err := st.LogHead(ctx, st.Channels().Published(""))
		if err != nil {
			t.Fatal(err)
		}
		const backlog = 300
		for i := range backlog {
			if _, err := st.CreatePost(ctx, users["carol"], store.NewPost{Title: fmt.Sprintf("carol %d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.CreatePost(ctx, users["bob"], store.NewPost{Title: "bob's"}); err != nil {
			t.Fatal(err)
		}
		q := `subscription($after: String) { feed(after: $after) { title } }`
		for _, proto := range protos {
			t.Run(proto, func(t *testing.T) {
				trips.Reset()
				s := subscribe(t, a.srv.URL, proto, tokens["alice"], q, map[string]any{"after": head})
				defer s.close()
				var got struct{ Feed struct{ Title string } }
				next(t, s, &got)
				if got.Feed.Title != "bob's" {
					t.Fatalf("first event %q, want bob's post", got.Feed.Title)
				}
				t.Logf("%d commands in %d round trips", trips.Commands(), trips.Count())
				if n := trips.Commands(); n >= backlog/2 {
					t.Errorf("the resume sent %d commands to Redis for %d new posts by someone not followed, want far fewer", n, backlog)
				}
			})
		}
	})
}
