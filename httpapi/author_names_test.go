package httpapi_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestAuthorNamesCostNoRoundTrip checks that a listing that shows only its authors' id and name
// reads no author — each post and comment keeps its author's name — and so costs one round trip
// fewer than one that shows more of them, with the same ids and names; that posts and comments
// written before names were kept still show their authors, read as before; and that rebuild gives
// them their names.
func TestAuthorNamesCostNoRoundTrip(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		counted, rt := b.Counted(t)
		a := newAPI(t, counted, store.Options{})
		ann, _ := a.signUp("Ann")
		bob, _ := a.signUp("Bob")
		cat, _ := a.signUp("Cat") // the last level's author is no one met above
		p := a.createPost(ann, "first")
		c := a.comment(bob, p, "", "top")
		a.comment(cat, p, c.ID, "reply")
		a.createPost(bob, "second")
		// Every read executes: the response cache is off.
		off := httptest.NewServer(httpapi.New(httpapi.Config{Store: a.store, Hub: a.hub, ResponseCacheMiB: -1}))
		t.Cleanup(off.Close)
		a.srv = off

		const (
			front  = `{posts(sort:NEW,first:10){edges{node{id author{AUTHOR}}}}}`
			thread = `query($p:ID!){post(id:$p){id author{AUTHOR} comments(first:10){edges{node{id author{AUTHOR}
				replies(first:10){edges{node{id author{AUTHOR}}}}}}}}}`
		)
		type read struct {
			trips int64
			data  string
		}
		run := func(query, author string) read {
			t.Helper()
			q := strings.ReplaceAll(query, "AUTHOR", author)
			vars := map[string]any{"p": p}
			a.do("", q, vars) // warm the connection pool
			rt.Reset()
			r := a.do("", q, vars)
			if len(r.Errors) > 0 || r.Status != 200 {
				t.Fatalf("%s: %d %v", q, r.Status, r.Errors)
			}
			return read{rt.Count(), string(r.Data)}
		}
		for _, q := range []string{front, thread} {
			named, full := run(q, "id name"), run(q, "id name createdAt")
			if !strings.Contains(named.data, `"name":"Ann"`) || !strings.Contains(named.data, `"name":"Bob"`) ||
				!strings.Contains(named.data, `"id":"user:ann"`) {
				t.Fatalf("authors by name: %s", named.data)
			}
			if named.trips != full.trips-1 {
				t.Fatalf("%d round trips showing id and name, %d showing more: want one fewer\n%s", named.trips, full.trips, q)
			}
			if typed := run(q, "__typename id name"); typed.trips != named.trips {
				t.Fatalf("%d round trips with __typename, %d without", typed.trips, named.trips)
			}
			if frag := run(q, "... on User { id name }"); frag.data != named.data || frag.trips != full.trips {
				t.Fatalf("through a fragment: %d round trips (want %d), %s", frag.trips, full.trips, frag.data)
			}

			forgetAuthorNames(t, b, a.store.Options().Prefix)
			if old := run(q, "id name"); old.data != named.data || old.trips != full.trips {
				t.Fatalf("items without names: %d round trips (want %d, the authors read), %s", old.trips, full.trips, old.data)
			}
			st, err := a.store.Rebuild(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Named != 4 {
				t.Fatalf("rebuild named %d posts and comments, want 4", st.Named)
			}
			if again := run(q, "id name"); again.data != named.data || again.trips != named.trips {
				t.Fatalf("after rebuild: %d round trips (want %d), %s", again.trips, named.trips, again.data)
			}
		}
	})
}

// forgetAuthorNames drops the author names from the posts and comments under prefix, as they were
// written before names were kept (a packed comment then keeps its author in a).
func forgetAuthorNames(t *testing.T, b storetest.Backend, prefix string) {
	t.Helper()
	ctx := context.Background()
	forget := func(ctx context.Context, c rdb.Cmdable) error {
		iter := c.Scan(ctx, 0, prefix+"{p:*", 100).Iterator()
		for iter.Next(ctx) {
			key := iter.Val()
			if c.Type(ctx, key).Val() != "hash" {
				continue
			}
			// A packed comment (layout 6, store/comment_meta.go) keeps its name in n and its
			// author in a only without one.
			if v := c.HMGet(ctx, key, "m", "a", "n").Val(); len(v) == 3 && v[0] != nil {
				if name, _ := v[2].(string); name != "" && v[1] == nil {
					if err := c.HSet(ctx, key, "a", strings.ToLower(name)).Err(); err != nil {
						return err
					}
				}
				if err := c.HDel(ctx, key, "n").Err(); err != nil {
					return err
				}
				continue
			}
			if err := c.HDel(ctx, key, "aname").Err(); err != nil {
				return err
			}
		}
		return iter.Err()
	}
	var err error
	if cc, ok := b.Client.(*rdb.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *rdb.Client) error { return forget(ctx, c) })
	} else {
		err = forget(ctx, b.Client)
	}
	if err != nil {
		t.Fatalf("forget author names: %v", err)
	}
}
