package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// sendMessage sends a message through the API and returns its id.
func (a *api) sendMessage(token, to, body string) string {
	a.t.Helper()
	var d struct{ SendMessage struct{ ID string } }
	a.do(token, `mutation($to: ID!, $b: String!) { sendMessage(toUserId: $to, body: $b) { id } }`,
		map[string]any{"to": to, "b": body}).decode(a.t, &d)
	return d.SendMessage.ID
}

// TestMessagesThroughTheAPI runs a conversation through GraphQL: a request, its acceptance by a
// reply, paging both ways from both sides, unread counts, reading, editing and deleting (a
// tombstone for both), and the errors a client can act on.
func TestMessagesThroughTheAPI(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		alice, aliceID := a.signUp("alice")
		bob, bobID := a.signUp("bob")
		carol, carolID := a.signUp("carol")
		counts := func(token string) (unread, requests, convs int) {
			var d struct {
				UnreadMessageCount int
				MessageRequests    struct{ TotalCount int }
				Conversations      struct{ TotalCount int }
			}
			a.do(token, `{ unreadMessageCount messageRequests { totalCount } conversations { totalCount } }`, nil).decode(t, &d)
			return d.UnreadMessageCount, d.MessageRequests.TotalCount, d.Conversations.TotalCount
		}
		first := a.sendMessage(alice, bobID, "hello bob")
		if u, r, c := counts(bob); u != 0 || r != 1 || c != 0 {
			t.Errorf("bob after a request: unread %d, requests %d, conversations %d; want 0 1 0", u, r, c)
		}
		var ids []string
		ids = append(ids, first)
		for i := 1; i < 7; i++ {
			from, to := bob, aliceID
			if i%2 == 0 {
				from, to = alice, bobID
			}
			ids = append(ids, a.sendMessage(from, to, fmt.Sprint("m", i)))
		}
		// Replying accepted the request, and each reply read what came before it.
		if u, r, c := counts(bob); u != 1 || r != 0 || c != 1 {
			t.Errorf("bob after replying: unread %d, requests %d, conversations %d; want 1 0 1", u, r, c)
		}
		if u, _, _ := counts(alice); u != 0 {
			t.Errorf("alice unread %d, want 0", u)
		}
		page := `query($w: ID!, $f: Int, $a: String, $l: Int, $b: String) {
			messages(withUserId: $w, first: $f, after: $a, last: $l, before: $b) {
				edges { cursor node { id body deleted sender { name } recipient { name } } }
				pageInfo { hasNextPage hasPreviousPage startCursor endCursor } totalCount } }`
		type msgPage struct {
			Messages struct {
				Edges []struct {
					Cursor string
					Node   struct {
						ID, Body  string
						Deleted   bool
						Sender    struct{ Name string }
						Recipient struct{ Name string }
					}
				}
				PageInfo struct {
					HasNextPage, HasPreviousPage bool
					StartCursor, EndCursor       string
				}
				TotalCount int
			}
		}
		for _, side := range []struct{ token, with string }{{alice, bobID}, {bob, aliceID}} {
			var fwd, bwd []string
			vars := map[string]any{"w": side.with, "f": 3}
			for {
				var d msgPage
				a.do(side.token, page, vars).decode(t, &d)
				for _, e := range d.Messages.Edges {
					fwd = append(fwd, e.Node.ID)
				}
				if !d.Messages.PageInfo.HasNextPage {
					break
				}
				vars["a"] = d.Messages.PageInfo.EndCursor
			}
			vars = map[string]any{"w": side.with, "l": 3}
			for {
				var d msgPage
				a.do(side.token, page, vars).decode(t, &d)
				var got []string
				for _, e := range d.Messages.Edges {
					got = append(got, e.Node.ID)
				}
				bwd = append(got, bwd...)
				if !d.Messages.PageInfo.HasPreviousPage {
					break
				}
				vars["b"] = d.Messages.PageInfo.StartCursor
			}
			if !slices.Equal(fwd, ids) || !slices.Equal(bwd, ids) {
				t.Errorf("paged %v forwards, %v backwards; want %v", fwd, bwd, ids)
			}
		}
		// Reading, editing, deleting.
		var read struct {
			MarkConversationRead struct {
				UnreadCount int
				With        struct{ Name string }
				LastMessage struct{ Body string }
			}
		}
		a.do(bob, `mutation($w: ID!) { markConversationRead(withUserId: $w) { unreadCount with { name } lastMessage { body } } }`,
			map[string]any{"w": aliceID}).decode(t, &read)
		if u, _, _ := counts(bob); u != 0 {
			t.Errorf("bob unread %d after reading, want 0", u)
		}
		if r := read.MarkConversationRead; r.UnreadCount != 0 || r.With.Name != "alice" || r.LastMessage.Body != "m6" {
			t.Errorf("markConversationRead: %+v", r)
		}
		if r := a.do(bob, `mutation($id: ID!) { editMessage(id: $id, body: "x") { id } }`, map[string]any{"id": first}); r.code() != httpapi.CodeForbidden {
			t.Errorf("editing another's message: %+v", r.Errors)
		}
		var del struct{ DeleteMessage string }
		a.do(alice, `mutation($id: ID!) { deleteMessage(id: $id) }`, map[string]any{"id": first}).decode(t, &del)
		if del.DeleteMessage != first {
			t.Errorf("deleteMessage returned %q, want the id %q", del.DeleteMessage, first)
		}
		var node struct {
			Node struct {
				Body    *string
				Deleted bool
			}
		}
		a.do(bob, `query($id: ID!) { node(id: $id) { ... on Message { body deleted } } }`, map[string]any{"id": first}).decode(t, &node)
		if node.Node.Body != nil || !node.Node.Deleted {
			t.Errorf("bob sees the deleted message as %+v, want a tombstone", node.Node)
		}
		var other struct{ Node json.RawMessage }
		a.do(carol, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": first}).decode(t, &other)
		if string(other.Node) != "null" {
			t.Errorf("carol reads alice's message: %s", other.Node)
		}
		// Blocks, requests declined, bad input.
		a.do(carol, `mutation($u: ID!) { blockUser(userId: $u) { id } }`, map[string]any{"u": aliceID}).decode(t, &struct{}{})
		if r := a.do(alice, `mutation($to: ID!) { sendMessage(toUserId: $to, body: "hi") { id } }`, map[string]any{"to": carolID}); r.code() != httpapi.CodeForbidden {
			t.Errorf("writing to one who blocks you: %+v", r.Errors)
		}
		a.sendMessage(carol, bobID, "spam")
		var dec struct{ DeclineMessageRequest string }
		a.do(bob, `mutation($u: ID!) { declineMessageRequest(userId: $u) }`, map[string]any{"u": carolID}).decode(t, &dec)
		if !strings.HasPrefix(dec.DeclineMessageRequest, "conversation:") {
			t.Errorf("declineMessageRequest returned %q, want the conversation's id", dec.DeclineMessageRequest)
		}
		if r := a.do(carol, `mutation($to: ID!) { sendMessage(toUserId: $to, body: "again") { id } }`, map[string]any{"to": bobID}); r.code() != httpapi.CodeForbidden {
			t.Errorf("a request after a decline: %+v", r.Errors)
		}
		// A request from a user the recipient blocks since is left out of their requests.
		dan, danID := a.signUp("dan")
		a.sendMessage(dan, bobID, "buy now")
		requesters := func() []string {
			var d struct {
				MessageRequests struct {
					Nodes []struct{ With struct{ Name string } }
				}
			}
			a.do(bob, `{ messageRequests { nodes { with { name } } } }`, nil).decode(t, &d)
			var out []string
			for _, n := range d.MessageRequests.Nodes {
				out = append(out, n.With.Name)
			}
			return out
		}
		if got := requesters(); !slices.Equal(got, []string{"dan"}) {
			t.Errorf("bob's requests %v, want [dan]", got)
		}
		a.do(bob, `mutation($u: ID!) { blockUser(userId: $u) { id } }`, map[string]any{"u": danID}).decode(t, &struct{}{})
		if got := requesters(); len(got) != 0 {
			t.Errorf("bob's requests after blocking dan %v, want none", got)
		}
		if r := a.do(carol, `mutation($to: ID!) { sendMessage(toUserId: $to, body: "") { id } }`, map[string]any{"to": aliceID}); r.code() != httpapi.CodeBadUserInput {
			t.Errorf("an empty message: %+v", r.Errors)
		}
		if r := a.do("", `{ unreadMessageCount }`, nil); r.code() != httpapi.CodeUnauthenticated {
			t.Errorf("anonymous unreadMessageCount: %+v", r.Errors)
		}
	})
}

// TestMessageAddedResumesAcrossARestart subscribes to messageAdded on server A over every
// transport; A stops while messages are sent through server B on the same Redis; the client
// resumes on B with its last cursor and receives every message exactly once, in order.
func TestMessageAddedResumesAcrossARestart(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		w := serve(t, b.NewStore(t, store.Options{}), httpapi.Live{}) // server B
		alice, aliceID := w.signUp("alice")
		bob, bobID := w.signUp("bob")
		w.sendMessage(bob, aliceID, "open")
		q := `subscription($after: String) { messageAdded(after: $after) { body sender { name } } }`
		for _, proto := range protos {
			t.Run(proto, func(t *testing.T) {
				st, err := store.New(context.Background(), b.NewClient(t), w.store.Options())
				if err != nil {
					t.Fatal(err)
				}
				a := serve(t, st, httpapi.Live{}) // server A
				s := subscribe(t, a.srv.URL, proto, alice, q, nil)
				waitSubscribers(t, a, 1)
				w.sendMessage(bob, aliceID, proto+" 1")
				w.sendMessage(alice, bobID, proto+" 2") // the viewer's own messages arrive too
				got := []string{string(event(t, s).Data)}
				last := event(t, s)
				got = append(got, string(last.Data))
				if err := a.hub.Close(); err != nil {
					t.Fatal(err)
				}
				if r, done := s.result(t); done || r.code() != httpapi.CodeUnavailable {
					t.Fatalf("server A stopping: got %+v, done %v; want %s", r, done, httpapi.CodeUnavailable)
				}
				s.close()
				a.srv.Close()
				for i := 3; i <= 5; i++ { // while the client has no server
					w.sendMessage(bob, aliceID, fmt.Sprintf("%s %d", proto, i))
				}
				s2 := subscribe(t, w.srv.URL, proto, alice, q, map[string]any{"after": last.Extensions.Cursor})
				defer s2.close()
				got = append(got, bodies(t, s2, 3)...)
				waitSubscribers(t, w, 1)
				w.sendMessage(bob, aliceID, proto+" 6")
				got = append(got, bodies(t, s2, 1)...)
				for i, g := range got {
					sender := "bob"
					if i == 1 {
						sender = "alice"
					}
					if want := fmt.Sprintf(`{"messageAdded":{"body":"%s %d","sender":{"name":"%s"}}}`, proto, i+1, sender); g != want {
						t.Errorf("event %d = %s, want %s", i+1, g, want)
					}
				}
				s2.close()
				waitSubscribers(t, w, 0)
			})
		}
	})
}
