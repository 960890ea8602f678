package httpapi_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// userCommentsQuery reads alice's comments in the order $s (left out: the default), after $a.
const userCommentsQuery = `query($s: CommentSort, $a: String) { user(name: "alice") {
	comments(sort: $s, first: 10, after: $a) { totalCount edges { cursor node { id } } } } }`

// userCommentsPage decodes the ids and cursors of a userCommentsQuery answer.
func userCommentsPage(t *testing.T, body []byte) (ids, cursors []string) {
	t.Helper()
	var d struct {
		User struct {
			Comments struct {
				Edges []struct {
					Cursor string
					Node   struct{ ID string }
				}
			}
		}
	}
	mustData(t, body, &d)
	for _, e := range d.User.Comments.Edges {
		ids, cursors = append(ids, e.Node.ID), append(cursors, e.Cursor)
	}
	return ids, cursors
}

// User.comments answers in every order (issue 26): TOP, BEST and CONTROVERSIAL rank by votes,
// a vote reorders them at once though the response cache keeps the answer, a cursor of one order
// is BAD_USER_INPUT in another, and the ranked orders cost UserCommentsSortCost more.
func TestUserCommentsSorts(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{WriteLimit: -1})
		alice, _ := a.signUp("alice")
		bob, _ := a.signUp("bob")
		var voters []string
		for i := range 3 {
			tok, _ := a.signUp(fmt.Sprint("voter", i))
			voters = append(voters, tok)
		}
		vote := func(comment string, ups, downs int) {
			t.Helper()
			for i, v := range voters[:ups+downs] {
				dir := "UP"
				if i >= ups {
					dir = "DOWN"
				}
				a.do(v, `mutation($c:ID!,$d:VoteDirection!){voteComment(commentId:$c,direction:$d){id}}`,
					map[string]any{"c": comment, "d": dir}).decode(t, &struct{}{})
			}
		}
		post := a.createPost(bob, "a post")
		old := a.comment(alice, post, "", "old").ID
		mid := a.comment(alice, post, "", "mid").ID
		young := a.comment(alice, post, "", "young").ID
		vote(old, 1, 1)   // TOP 0, BEST 0.09, CONTROVERSIAL 2
		vote(mid, 2, 0)   // TOP 2, BEST 0.34, CONTROVERSIAL 0
		vote(young, 0, 0) // all 0

		for _, tc := range []struct {
			sort any
			want []string
		}{
			{nil, []string{young, mid, old}},
			{"OLD", []string{old, mid, young}},
			{"TOP", []string{mid, young, old}}, // young and old tie at 0: the larger number first
			{"BEST", []string{mid, old, young}},
			{"CONTROVERSIAL", []string{old, young, mid}},
		} {
			vars := map[string]any{"s": tc.sort}
			first, _ := rawCached(t, a.h, "", userCommentsQuery, vars)
			again, how := rawCached(t, a.h, "", userCommentsQuery, vars)
			if got, _ := userCommentsPage(t, first); !slices.Equal(got, tc.want) || string(first) != string(again) || how != "hit" {
				t.Fatalf("sort %v: %v, want %v; again (%s) %s", tc.sort, got, tc.want, how, again)
			}
		}

		// A vote reorders BEST at once, on a comment the cached page did not show too: the
		// cached answer read the votes of every comment it ranked.
		const top1 = `{ user(name: "alice") { comments(sort: BEST, first: 1) { edges { node { id } } } } }`
		rawCached(t, a.h, "", top1, nil)
		if body, how := rawCached(t, a.h, "", top1, nil); how != "hit" {
			t.Fatalf("BEST's first comment, again: %s %s", how, body)
		}
		vote(young, 3, 0)
		if got, _ := userCommentsPage(t, raw(t, a.h, "", top1, nil)); !slices.Equal(got, []string{young}) {
			t.Fatalf("BEST's first comment after a vote on young: %v", got)
		}
		best, cursors := userCommentsPage(t, raw(t, a.h, "", userCommentsQuery, map[string]any{"s": "BEST"}))
		if !slices.Equal(best, []string{young, mid, old}) {
			t.Fatalf("BEST after a vote: %v", best)
		}
		after, _ := userCommentsPage(t, raw(t, a.h, "", userCommentsQuery, map[string]any{"s": "BEST", "a": cursors[0]}))
		if !slices.Equal(after, best[1:]) {
			t.Fatalf("BEST after its first cursor: %v, want %v", after, best[1:])
		}
		for _, other := range []string{"NEW", "OLD", "TOP", "CONTROVERSIAL"} {
			if r := a.do("", userCommentsQuery, map[string]any{"s": other, "a": cursors[0]}); r.code() != "BAD_USER_INPUT" {
				t.Fatalf("a BEST cursor in %s: %+v", other, r.Errors)
			}
		}

		cost := func(sort string) int {
			t.Helper()
			r := a.do("", userCommentsQuery, map[string]any{"s": sort})
			r.decode(t, &struct{}{})
			return r.Extensions.Cost.Requested
		}
		if n, o, b := cost("NEW"), cost("OLD"), cost("BEST"); o != n || b != n+httpapi.UserCommentsSortCost {
			t.Fatalf("cost NEW %d, OLD %d, BEST %d; want BEST = NEW + %d", n, o, b, httpapi.UserCommentsSortCost)
		}
	})
}
