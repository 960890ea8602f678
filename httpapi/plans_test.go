package httpapi_test

import (
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestOnePlanManyResponses reads through one planned operation from many requests at once, with
// different variables: each answer is the one its own variables give when read alone. (readexec
// keeps an operation's plan and shares it between responses; under -race this holds them to
// writing nothing shared.)
func TestOnePlanManyResponses(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		off := httptest.NewServer(httpapi.New(httpapi.Config{Store: a.store, Hub: a.hub, ResponseCacheMiB: -1}))
		t.Cleanup(off.Close)
		a.srv = off
		tok, _ := a.signUp("writer")
		var posts []string
		for i := range 4 {
			p := a.createPost(tok, fmt.Sprint("post ", i))
			for j := range i + 1 {
				a.comment(tok, p, "", fmt.Sprintf("comment %d of post %d", j, i))
			}
			posts = append(posts, p)
		}
		const q = `query($p: ID!, $n: Int) { post(id: $p) { id title author { name }
			comments(first: $n) { totalCount edges { cursor node { id body author { name } } } }
			top: comments(sort: TOP, first: 2) { nodes { id } } } }`
		vars := func(i int) map[string]any { return map[string]any{"p": posts[i%4], "n": 1 + i%3} }
		want := map[int]string{}
		for i := range 12 {
			r := a.do("", q, vars(i))
			if len(r.Errors) > 0 {
				t.Fatalf("%v: %v", vars(i), r.Errors)
			}
			want[i] = string(r.Data)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8*12)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 12 {
					if r := a.do("", q, vars(i)); string(r.Data) != want[i] {
						errs <- fmt.Errorf("%v: %s, alone %s", vars(i), r.Data, want[i])
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
