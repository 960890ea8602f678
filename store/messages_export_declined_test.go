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

// hookWriter collects an export and, at the first flush after its text holds marker, runs hook
// once: a write made while the export is under way, at a point the test chooses.
type hookWriter struct {
	bytes.Buffer
	marker string
	hook   func()
}

func (w *hookWriter) Flush() error {
	if w.hook != nil && bytes.Contains(w.Bytes(), []byte(w.marker)) {
		hook := w.hook
		w.hook = nil
		hook()
	}
	return nil
}

// TestExportMessagesWhileConversationsMove: a conversation that moves between the account's lists
// while the export reads them — a request accepted after the conversations were read, a request
// declined after the requests were read — is exported once, neither lost nor repeated.
func TestExportMessagesWhileConversationsMove(t *testing.T) {
	for _, tc := range []struct {
		name string
		seed func(t *testing.T, s *store.Store)
		move func(ctx context.Context, s *store.Store) error
		want []string
	}{{
		name: "accepted once the conversations were read",
		seed: func(t *testing.T, s *store.Store) {
			send(t, s, "fay", "dan", "hello dan")
			send(t, s, "dan", "fay", "hi fay")
			send(t, s, "gus", "dan", "pending")
		},
		move: func(ctx context.Context, s *store.Store) error {
			_, err := s.AcceptMessageRequest(ctx, "dan", "gus")
			return err
		},
		want: []string{"user:dan>user:fay hi fay", "user:fay>user:dan hello dan", "user:gus>user:dan pending"},
	}, {
		name: "declined once the requests were read",
		seed: func(t *testing.T, s *store.Store) {
			send(t, s, "gus", "dan", "pending")
		},
		move: func(ctx context.Context, s *store.Store) error {
			_, err := s.DeclineMessageRequest(ctx, "dan", "gus")
			return err
		},
		want: []string{"user:gus>user:dan pending"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				s := b.NewStore(t, store.Options{})
				signUp(t, s, "dan", "fay", "gus")
				tc.seed(t, s)
				var moveErr error
				w := &hookWriter{marker: `"messages":[`, hook: func() { moveErr = tc.move(ctx, s) }}
				if err := s.Export(ctx, "dan", "", w); err != nil {
					t.Fatal(err)
				}
				if moveErr != nil {
					t.Fatal(moveErr)
				}
				if w.hook != nil {
					t.Fatal("the export never flushed its messages")
				}
				var doc struct {
					Messages []struct {
						SenderID, RecipientID string
						Body                  *string
					}
					Complete bool
				}
				if err := json.Unmarshal(w.Bytes(), &doc); err != nil || !doc.Complete {
					t.Fatalf("the export: %v, complete %v", err, doc.Complete)
				}
				var got []string
				for _, m := range doc.Messages {
					got = append(got, fmt.Sprintf("%s>%s %s", m.SenderID, m.RecipientID, *m.Body))
				}
				slices.Sort(got)
				if !slices.Equal(got, tc.want) {
					t.Errorf("dan's export holds %q, want %q", got, tc.want)
				}
			})
		})
	}
}
