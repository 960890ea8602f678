package store

import (
	"context"
	"strings"
)

// Layout 6 kept the ids of an inbox's unread notifications in a sorted set of their own
// ({n:<user>}:unread, by creation time), its size the unread count: about 24 bytes a notification
// beside the record (~37) and the inbox's entry (~24). Layout 7 keeps the read state in the record
// (the kind's letter in lower case while unread; noticeRecord.pack) and the count in the field
// "#u" of the inbox's hash (unreadField); the unread list is a walk of the inbox
// (unread_page.lua). Layout 7 also drops the creation time from the record (8 bytes a
// notification), which the id's score in the inbox holds. The migration from layout 6 folds each
// inbox's set into its records and count and deletes it, and drops the records' times, one script
// per inbox (fold_inbox.lua), safe beside traffic and to run again: an inbox of layout 7 is left
// as it is.
//
// Meanwhile both shapes are read and written exactly: an inbox is of layout 6 while it has the set
// and no count (lib/inbox_unread.lua), and notify.lua and mark_read.lua write it as layout 6 did;
// unread_page.lua pages either; and a process that found the keyspace of layout 6 reads records
// and counts with legacy_notes.lua, which reads either shape in one step, until it has migrated
// the keyspace (Store.legacyUnread); the others read the records and the count alone. Readers
// cannot meet an inbox half folded: each one is folded by one script. A process of layout 6 still
// running beside the migration writes a folded inbox's new notifications read-looking, their ids
// in a new set: running the step again (agora migrate's step, or rebuild) folds them in too.

// foldInboxesDoes is what the step does, for `agora migrate --dry-run`.
const foldInboxesDoes = "keep each notification's read state in its record (the kind's letter in lower case " +
	"while unread) and each inbox's unread count in its hash ({n:<name>}:notes field #u), in place of a sorted " +
	"set of the unread ids ({n:<name>}:unread, deleted; about 24 bytes less per notification), and drop the " +
	"creation time from the records, which the inbox's scores hold (about 8 bytes less per notification)"

// foldInboxes writes every inbox of layout 6 as layout 7 keeps it (fold_inbox.lua: the migration
// from layout 6) and returns how many records it marked unread.
func (s *Store) foldInboxes(ctx context.Context) (int, error) {
	head, tail := s.k.prefix+"{n:", "}:notes"
	return s.scanScripts(ctx, s.k.inboxNotes("*"), "fold the inboxes",
		func(key string) (scriptCall, bool) {
			uid, _ := strings.CutPrefix(key, head)
			uid, ok := strings.CutSuffix(uid, tail)
			if !ok || !validUserName(uid) || key != s.k.inboxNotes(uid) {
				return scriptCall{}, false
			}
			return scriptCall{name: "fold_inbox", keys: []string{key, s.k.legacyInboxUnread(uid)}}, true
		})
}
