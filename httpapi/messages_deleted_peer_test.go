package httpapi_test

import (
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestConversationWithADeletedAccount: a conversation outlives the other side's account, whose
// Conversation.with is then the [deleted] placeholder; its id (conversation:<a>:<b>) names it in
// withUserId, so that the viewer can still read it and mark it read. With only the placeholder's
// id, which names no user, its messages could not be paged and its unread messages counted in
// unreadMessageCount for ever.
func TestConversationWithADeletedAccount(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		a := newAPI(t, b, store.Options{})
		alice, aliceID := a.signUp("alice")
		carol, _ := a.signUp("carol")
		_, bobID := a.signUp("bob")
		a.sendMessage(alice, bobID, "hi bob") // another conversation, which must stay apart
		a.sendMessage(carol, aliceID, "hello alice")
		a.do(alice, `mutation { acceptMessageRequest(userId: "user:carol") { id } }`, nil).decode(t, &struct{}{})
		a.sendMessage(carol, aliceID, "are you there?")
		a.do(carol, `mutation { deleteAccount(password: "password1", eraseContent: false) }`, nil).decode(t, &struct{}{})
		a.settle()

		var list struct {
			UnreadMessageCount int
			Conversations      struct {
				Nodes []struct {
					ID          string
					UnreadCount int
					With        struct{ ID, Name string }
				}
			}
		}
		a.do(alice, `{ unreadMessageCount conversations { nodes { id unreadCount with { id name } } } }`, nil).decode(t, &list)
		conv := ""
		for _, c := range list.Conversations.Nodes {
			if c.With.ID == store.DeletedUserID {
				conv = c.ID
			}
		}
		if conv == "" || list.UnreadMessageCount != 2 {
			t.Fatalf("alice's conversations %+v, unread %d: want the one with the deleted carol, 2 unread", list.Conversations.Nodes, list.UnreadMessageCount)
		}
		var msgs struct {
			Messages struct {
				Nodes []struct {
					Body   string
					Sender struct{ ID string }
				}
			}
			Conversation *struct{ UnreadCount int }
		}
		a.do(alice, `query($c: ID!) { messages(withUserId: $c, last: 10) { nodes { body sender { id } } } conversation(withUserId: $c) { unreadCount } }`,
			map[string]any{"c": conv}).decode(t, &msgs)
		if n := len(msgs.Messages.Nodes); n != 2 || msgs.Messages.Nodes[1].Body != "are you there?" || msgs.Conversation == nil || msgs.Conversation.UnreadCount != 2 {
			t.Errorf("alice reads the conversation by its id: %+v", msgs)
		}
		var read struct{ MarkConversationRead struct{ UnreadCount int } }
		a.do(alice, `mutation($c: ID!) { markConversationRead(withUserId: $c) { unreadCount } }`, map[string]any{"c": conv}).decode(t, &read)
		var after struct{ UnreadMessageCount int }
		a.do(alice, `{ unreadMessageCount }`, nil).decode(t, &after)
		if read.MarkConversationRead.UnreadCount != 0 || after.UnreadMessageCount != 0 {
			t.Errorf("after marking it read: conversation %d unread, alice %d; want 0 and 0", read.MarkConversationRead.UnreadCount, after.UnreadMessageCount)
		}
		// A conversation id that is not the viewer's names nothing of theirs.
		bob := bobToken(t, a)
		if code := a.do(bob, `mutation { markConversationRead(withUserId: "conversation:alice:carol") { unreadCount } }`, nil).code(); code != "NOT_FOUND" {
			t.Errorf("bob marks read alice's conversation with carol: %s, want NOT_FOUND", code)
		}
		var foreign struct {
			Messages     struct{ TotalCount int }
			Conversation *struct{ ID string }
		}
		a.do(bob, `{ messages(withUserId: "conversation:alice:carol", first: 5) { totalCount } conversation(withUserId: "conversation:alice:carol") { id } }`, nil).decode(t, &foreign)
		if foreign.Messages.TotalCount != 0 || foreign.Conversation != nil {
			t.Errorf("bob reads alice's conversation with carol: %+v, want nothing", foreign)
		}
	})
}

// bobToken logs bob in.
func bobToken(t *testing.T, a *api) string {
	t.Helper()
	var d struct{ LogIn struct{ Token string } }
	a.do("", `mutation { logIn(name: "bob", password: "password1") { token } }`, nil).decode(t, &d)
	return d.LogIn.Token
}
