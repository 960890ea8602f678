package store

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPackedNotices: every kind of notification record reads back from its packed form as it was
// written, with what its cause says left out of the packing; a reply by a user with the longest
// name still packs under 64 bytes (so that an inbox's hash stays listpack-encoded); and layout 4's
// JSON reads as before.
func TestPackedNotices(t *testing.T) {
	long := strings.Repeat("n", 32)
	at := int64(1764197000123)
	for _, tc := range []struct {
		name, cause string
		rec         noticeRecord
		packed      string
	}{
		{"reply", "c:17:4", noticeRecord{Kind: NotificationReply, At: at, Actor: "bob", Post: "17", Comment: "4"}, "Rmiglcddn bob"},
		{"reply by the longest name", "c:123456789:123456789012", noticeRecord{Kind: NotificationReply, At: at, Actor: long, Post: "123456789", Comment: "123456789012"}, "Rmiglcddn " + long},
		{"mention in a comment", "c:17:4", noticeRecord{Kind: NotificationMention, At: at, Actor: "bob", Post: "17", Comment: "4"}, "Mmiglcddn bob"},
		{"mention in a post", "p:17", noticeRecord{Kind: NotificationMention, At: at, Actor: "bob", Post: "17"}, "Mmiglcddn bob"},
		{"follow", "f:bob", noticeRecord{Kind: NotificationFollow, At: at, Actor: "bob"}, "Fmiglcddn"},
		{"watched comment", "c:17:4", noticeRecord{Kind: NotificationWatchedComment, At: at, Actor: "bob", Post: "17", Comment: "4"}, "Cmiglcddn bob"},
		{"watched post", "p:17", noticeRecord{Kind: NotificationWatchedPost, At: at, Actor: "bob", Post: "17"}, "Pmiglcddn bob"},
		{"mod action on a comment", "m:rm:c:17:4", noticeRecord{Kind: NotificationModAction, At: at, Actor: "mod", Post: "17", Comment: "4", Mod: "rm:c:17:4"}, "Amiglcddn mod 17 4"},
		{"mod action on a user", "m:ban:bob", noticeRecord{Kind: NotificationModAction, At: at, Actor: "mod", Mod: "ban:bob"}, "Amiglcddn mod"},
		{"a field the cause does not say", "c:17:4", noticeRecord{Kind: NotificationReply, At: at, Actor: "bob", Post: "18", Comment: "4"}, "Rmiglcddn bob 18"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.rec.pack(tc.cause)
			if p != tc.packed {
				t.Errorf("packed %q, want %q", p, tc.packed)
			}
			if len(p) > 64 {
				t.Errorf("packed %q is %d bytes: the inbox's hash would be a hashtable", p, len(p))
			}
			if got, ok := unpackNotice(tc.cause, p); !ok || got != tc.rec {
				t.Errorf("unpacked %+v (%v), want %+v", got, ok, tc.rec)
			}
			js, err := json.Marshal(tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := unpackNotice(tc.cause, string(js)); !ok || got != tc.rec {
				t.Errorf("layout 4's %s read as %+v (%v), want %+v", js, got, ok, tc.rec)
			}
		})
	}
	for _, bad := range []string{"", "X12 bob", "R bob", "R!! bob", "{not json"} {
		if rec, ok := unpackNotice("c:17:4", bad); ok {
			t.Errorf("unpackNotice(%q) = %+v, want not ok", bad, rec)
		}
	}
}
