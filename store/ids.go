package store

import (
	"strings"
)

// Global ids are "<type>:<key>", for example "post:17", "user:alice", "group:golang",
// "comment:17:4" (a comment's id names its post) and "notification:alice:c:17:4" (a
// notification's id names its recipient and its cause), "modaction:rp:17:3" (an entry of the
// moderation log, named for what it did), "report:9" and "ban:g:golang:alice" or "ban:site:alice"
// (a user's ban from a group, or from the site). Clients treat them as opaque.
const (
	TypeUser         = "user"
	TypePost         = "post"
	TypeGroup        = "group"
	TypeComment      = "comment"
	TypeNotification = "notification"
	TypeModAction    = "modaction"
	TypeReport       = "report"
	TypeBan          = "ban"
	TypeMessage      = "message"
	TypeConversation = "conversation"
)

// Node is anything with a global id.
type Node interface {
	NodeID() string
}

// ParseID splits a global id into its type and key. It fails with KindInvalid on a malformed id.
func ParseID(id string) (typ, key string, err error) {
	typ, key, ok := strings.Cut(id, ":")
	if !ok || key == "" || len(id) > 200 {
		return "", "", invalidf("malformed id %q", truncate(id, 40))
	}
	switch typ {
	case TypeUser:
		if !validUserName(key) {
			break
		}
		return typ, key, nil
	case TypePost:
		if !isDigits(key) {
			break
		}
		return typ, key, nil
	case TypeGroup:
		if !validGroupName(key) {
			break
		}
		return typ, key, nil
	case TypeComment:
		p, c, ok := strings.Cut(key, ":")
		if !ok || !isDigits(p) || !isDigits(c) {
			break
		}
		return typ, key, nil
	case TypeNotification:
		if _, _, ok := splitNotificationKey(key); !ok {
			break
		}
		return typ, key, nil
	case TypeModAction:
		if !validModKey(key) {
			break
		}
		return typ, key, nil
	case TypeReport:
		if !isDigits(key) {
			break
		}
		return typ, key, nil
	case TypeBan:
		if _, _, ok := splitBanKey(key); !ok {
			break
		}
		return typ, key, nil
	case TypeMessage:
		if _, _, _, ok := splitMessageKey(key); !ok {
			break
		}
		return typ, key, nil
	case TypeConversation:
		if _, _, ok := splitConversationKey(key); !ok {
			break
		}
		return typ, key, nil
	}
	return "", "", invalidf("malformed id %q", truncate(id, 40))
}

// parseTypedID parses id and checks that it names a thing of type want.
func parseTypedID(id, want string) (string, error) {
	typ, key, err := ParseID(id)
	if err != nil {
		return "", err
	}
	if typ != want {
		return "", invalidf("id %q is not a %s id", truncate(id, 40), want)
	}
	return key, nil
}

// UserKey names a user at the store's boundary: the lower-cased name ("alice"), which is also the
// hash tag of the user's aggregate ({u:alice}). Every store method that takes or returns a user
// names them by UserKey, so the type system keeps global ids out: a global id from a client
// ("user:alice") becomes a UserKey through ParseUserID.
type UserKey string

// ID returns the user's global id ("user:alice").
func (u UserKey) ID() string { return userID(string(u)) }

// ParseUserID returns the key of the user a global id names, or KindInvalid.
func ParseUserID(id string) (UserKey, error) {
	k, err := parseTypedID(id, TypeUser)
	return UserKey(k), err
}

// PostKey returns the post key of a post id, or KindInvalid.
func PostKey(id string) (string, error) { return parseTypedID(id, TypePost) }

func userID(uid string) string   { return TypeUser + ":" + uid }
func postID(pid string) string   { return TypePost + ":" + pid }
func groupID(name string) string { return TypeGroup + ":" + name }

func isDigits(s string) bool {
	if s == "" || len(s) > 19 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
