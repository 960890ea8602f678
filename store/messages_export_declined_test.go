package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// exportedMessages returns the messages of uid's export, as "<sender>><recipient> <body>".
func exportedMessages(t *testing.T, s *store.Store, uid string) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Export(context.Background(), uk(uid), "", &buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Messages []struct {
			SenderID, RecipientID string
			Body                  *string
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range doc.Messages {
		body := "<deleted>"
		if m.Body != nil {
			body = *m.Body
		}
		out = append(out, fmt.Sprintf("%s>%s %s", m.SenderID, m.RecipientID, body))
	}
	return out
}

// TestExportHoldsDeclinedRequests: a declined request leaves the account's requests but its
// messages stay in the conversation, readable by the account (messages(withUserId)): the export
// holds them too, once, beside those of the account's conversations and pending requests.
func TestExportHoldsDeclinedRequests(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		signUp(t, s, "dan", "eve", "fay", "gus")
		send(t, s, "eve", "dan", "buy my stuff")
		send(t, s, "fay", "dan", "hello dan")
		send(t, s, "dan", "fay", "hi fay")
		send(t, s, "gus", "dan", "pending")
		if _, err := s.DeclineMessageRequest(ctx, "dan", "eve"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.MarkConversationRead(ctx, "dan", "gus", ""); err != nil { // a pending request with state
			t.Fatal(err)
		}
		p, err := s.NewLoader().Messages(ctx, "dan", "eve", store.Window{First: 10})
		if err != nil || len(p.Items) != 1 {
			t.Fatalf("dan reads the declined request: %v, %v", p, err)
		}
		got := exportedMessages(t, s, "dan")
		slices.Sort(got)
		want := []string{"user:dan>user:fay hi fay", "user:eve>user:dan buy my stuff", "user:fay>user:dan hello dan",
			"user:gus>user:dan pending"}
		if !slices.Equal(got, want) {
			t.Errorf("dan's export holds %q, want %q", got, want)
		}
	})
}
