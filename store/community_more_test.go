package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/mail"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// The community's private, moderation and account writes (community.more): private messages and
// their requests, watches and their notifications, read marks, content labels, email addresses
// and their tokens, bans, moderation and reports, edits of comments, saved posts, blocks and an
// account's deletion. TestFullRedis drives them; the backup drill does not (its restore rebuilds
// the rankings and the users' indexes, not these).

// mailbox is a mail.Sender that keeps what it is sent, so that a write can follow the link of a
// mail as its reader would.
type mailbox struct {
	mu    sync.Mutex
	mails []mail.Message
}

func (m *mailbox) Send(_ context.Context, msg mail.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mails = append(m.mails, msg)
	return nil
}

var linkInMail = regexp.MustCompile(`/([a-z-]+)\?token=([a-z0-9_~-]+\.[A-Za-z0-9_-]{43})`)

// token returns the token of the last mail to addr whose link goes to path ("verify-email",
// "reset-password").
func (m *mailbox) token(addr, path string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.mails) - 1; i >= 0; i-- {
		if !strings.EqualFold(m.mails[i].To, addr) {
			continue
		}
		if l := linkInMail.FindStringSubmatch(m.mails[i].Text); l != nil && l[1] == path {
			return l[2], nil
		}
	}
	return "", fmt.Errorf("no %s mail to %s among %d", path, addr, len(m.mails))
}

// newMoreCommunity returns a community that also makes the private, moderation and account writes.
func newMoreCommunity() *community {
	c := newCommunity()
	c.more = true
	c.mail = map[*store.Store]*mailbox{}
	return c
}

// newStore returns a store on b with the options o, whose mail the community's writes can read
// (see mailbox).
func (c *community) newStore(t *testing.T, b storetest.Backend, o store.Options) *store.Store {
	t.Helper()
	mb := &mailbox{}
	o.Mail.Sender = mb
	s := b.NewStore(t, o)
	if c.mail != nil {
		c.mail[s] = mb
	}
	return s
}

// mailToken returns the token of the last mail s sent to addr with a link to path.
func (c *community) mailToken(s *store.Store, addr, path string) (string, error) {
	mb := c.mail[s]
	if mb == nil {
		return "", fmt.Errorf("the store's mail is not the community's (see community.newStore)")
	}
	return mb.token(addr, path)
}

// uid is the key of the community's user i.
func (c *community) uid(i int) store.UserKey { return store.UserKey(c.users[i]) }

// email is the address of user i.
func email(i int) string { return fmt.Sprintf("user%d@example.org", i) }

// send sends a message from user a to user b.
func (c *community) send(a, b int, body string) write {
	return func(ctx context.Context, s *store.Store) error {
		_, err := s.SendMessage(ctx, c.uid(a), c.uid(b), body, "")
		return err
	}
}

// messageID returns the global id of the message from user a to user b with the body (message
// ids hold random hex: a write looks its message up as a client would).
func (c *community) messageID(ctx context.Context, s *store.Store, a, b int, body string) (string, error) {
	ms, err := s.NewLoader().Messages(ctx, c.uid(a), c.uid(b), store.Window{First: 100})
	if err != nil {
		return "", err
	}
	for _, m := range ms.Items {
		if m.Sender == c.uid(a) && m.Text == body {
			return m.ID, nil
		}
	}
	return "", fmt.Errorf("no message %q from %s to %s", body, c.users[a], c.users[b])
}

// firstMore is the writes of first() for c.more: user0 a site admin, addresses (one verified,
// one with a reset link pending), conversations and message requests, watches, saved posts, a
// block and reports.
func (c *community) firstMore() []write {
	ws := []write{
		func(ctx context.Context, s *store.Store) error { return s.GrantAdmin(ctx, "user0") },
	}
	for _, i := range []int{1, 2} {
		ws = append(ws, func(ctx context.Context, s *store.Store) error {
			_, err := s.SetEmail(ctx, c.uid(i), email(i), "password1")
			return err
		})
	}
	ws = append(ws,
		c.send(0, 1, "hello one"), c.send(1, 0, "hello zero"), c.send(0, 1, "how are you"),
		c.send(2, 3, "a request to three"), c.send(4, 0, "a request to zero"), c.send(2, 4, "a request to four"),
		func(ctx context.Context, s *store.Store) error {
			return s.WatchPost(ctx, c.uid(3), c.posts[0], store.WatchAll)
		},
		func(ctx context.Context, s *store.Store) error {
			return s.WatchGroup(ctx, c.uid(4), "redis", store.WatchAll)
		},
		c.save(2, 1), c.save(2, 2), c.save(3, 0),
		func(ctx context.Context, s *store.Store) error {
			_, err := s.Block(ctx, c.uid(4), c.uid(2))
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.ReportPost(ctx, c.uid(3), c.posts[2], "spam")
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.ReportComment(ctx, c.uid(4), "comment:"+postKey(3)+":1", "rude")
			return err
		},
		func(ctx context.Context, s *store.Store) error { return s.MarkPostRead(ctx, c.uid(1), c.posts[1]) },
		// Last, so that its link still works when then() follows it.
		func(ctx context.Context, s *store.Store) error { return s.RequestPasswordReset(ctx, email(2)) },
	)
	return ws
}

// save is user's save of post (indexes of the community's users and posts).
func (c *community) save(user, post int) write {
	return func(ctx context.Context, s *store.Store) error {
		_, err := s.SavePost(ctx, c.uid(user), c.posts[post])
		return err
	}
}

// thenMore is the writes of then() for c.more, one of each kind; late is the index of the user
// "late".
func (c *community) thenMore(late int) []write {
	reason := "off topic"
	yes := true
	until := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	return []write{
		// First, while its link (ResetTTL) works.
		func(ctx context.Context, s *store.Store) error {
			tok, err := c.mailToken(s, email(2), "reset-password")
			if err == nil {
				_, err = s.ResetPassword(ctx, tok, "password2")
			}
			return err
		},
		// Private messages.
		c.send(1, 0, "fine thanks"),
		c.send(late, 2, "a request from late"),
		func(ctx context.Context, s *store.Store) error {
			gid, err := c.messageID(ctx, s, 1, 0, "hello zero")
			if err == nil {
				_, err = s.EditMessage(ctx, c.uid(1), gid, "hello zero, edited")
			}
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			gid, err := c.messageID(ctx, s, 0, 1, "hello one")
			if err == nil {
				err = s.DeleteMessage(ctx, c.uid(0), gid)
			}
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.MarkConversationRead(ctx, c.uid(0), c.uid(1), "")
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.AcceptMessageRequest(ctx, c.uid(0), c.uid(4))
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.DeclineMessageRequest(ctx, c.uid(3), c.uid(2))
			return err
		},
		// Watches, and the comments they notify of.
		func(ctx context.Context, s *store.Store) error {
			return s.WatchPost(ctx, c.uid(late), c.posts[1], store.WatchAll)
		},
		func(ctx context.Context, s *store.Store) error {
			return s.WatchGroup(ctx, c.uid(2), "go", store.WatchAll)
		},
		func(ctx context.Context, s *store.Store) error {
			return s.WatchPost(ctx, c.uid(3), c.posts[0], store.WatchMuted)
		},
		c.comment(3, 1, "", "a comment late watches"),
		c.comment(4, 0, "", "a comment on a muted thread"),
		c.post(0, "a post in go, watched", []string{"go"}),
		// Read marks.
		func(ctx context.Context, s *store.Store) error { return s.MarkPostRead(ctx, c.uid(3), c.posts[0]) },
		func(ctx context.Context, s *store.Store) error { return s.MarkPostRead(ctx, c.uid(1), c.posts[1]) },
		// Labels.
		func(ctx context.Context, s *store.Store) error {
			_, err := s.SetPostLabels(ctx, c.uid(0), c.posts[3], &yes, nil, &reason)
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.SetPostLabels(ctx, store.UserKey(c.users[4%5]), c.posts[4], nil, &yes, nil)
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.UpdateGroup(ctx, c.uid(0), "ops", store.GroupEdit{NSFW: &yes})
			return err
		},
		// Email.
		func(ctx context.Context, s *store.Store) error {
			tok, err := c.mailToken(s, email(1), "verify-email")
			if err == nil {
				_, err = s.VerifyEmail(ctx, tok)
			}
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.SetEmail(ctx, c.uid(3), email(3), "password1")
			return err
		},
		func(ctx context.Context, s *store.Store) error { return s.RequestPasswordReset(ctx, email(1)) },
		// Bans.
		func(ctx context.Context, s *store.Store) error {
			_, err := s.BanUser(ctx, c.uid(0), c.uid(3), "go", &until, "trolling")
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.BanUser(ctx, c.uid(0), c.uid(2), "", nil, "spam everywhere")
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.BanUser(ctx, c.uid(0), c.uid(1), "redis", nil, "for a while")
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.UnbanUser(ctx, c.uid(0), c.uid(1), "redis")
			return err
		},
		// Moderation.
		func(ctx context.Context, s *store.Store) error {
			_, err := s.RemovePost(ctx, c.uid(0), c.posts[4], "off topic")
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.RemovePost(ctx, c.uid(0), c.posts[6], "by mistake")
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.RestorePost(ctx, c.uid(0), c.posts[6])
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.LockPost(ctx, c.uid(0), c.posts[7], true, &reason)
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.PinPost(ctx, c.uid(0), c.posts[1], "redis", true, nil)
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.RemoveComment(ctx, c.uid(0), "comment:"+postKey(2)+":2", "rude")
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.RemoveComment(ctx, c.uid(0), "comment:"+postKey(3)+":2", "by mistake")
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.RestoreComment(ctx, c.uid(0), "comment:"+postKey(3)+":2")
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.ReportPost(ctx, c.uid(late), c.posts[7], "a lie")
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.ResolveReportAs(ctx, c.uid(0), "report:1", store.ReportActioned)
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.ResolveReportAs(ctx, c.uid(0), "report:2", store.ReportDismissed)
			return err
		},
		// Edits, saved posts, blocks.
		func(ctx context.Context, s *store.Store) error {
			_, err := s.EditComment(ctx, store.UserKey(c.users[(0+1)%5]), "comment:"+postKey(0)+":1", "comment on 0, edited")
			return err
		},
		c.save(late, 2),
		func(ctx context.Context, s *store.Store) error {
			_, err := s.UnsavePost(ctx, c.uid(2), c.posts[1])
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.Block(ctx, c.uid(late), c.uid(1))
			return err
		},
		func(ctx context.Context, s *store.Store) error {
			_, err := s.Unblock(ctx, c.uid(4), c.uid(2))
			return err
		},
		// An account's deletion.
		func(ctx context.Context, s *store.Store) error {
			return s.DeleteAccount(ctx, c.uid(4), "password1", false)
		},
	}
}

// banVersion is the version in the id of a ban's or unban's moderation action: the value of its
// slot's revision counter, which repairs raise too, so it differs between two sites that got the
// same writes; renderMore leaves it out.
var banVersion = regexp.MustCompile(`(ban:(?:g:[a-z0-9_-]+|site):[a-z0-9_-]+):\d+`)

// renderMore writes out what the writes of c.more derive, as each user reads it, and the mails
// sent.
func (c *community) renderMore(t *testing.T, s *store.Store, out *strings.Builder) {
	t.Helper()
	var b strings.Builder
	c.renderMoreTo(t, s, &b)
	out.WriteString(banVersion.ReplaceAllString(b.String(), "$1:v"))
	if mb := c.mail[s]; mb != nil {
		mb.mu.Lock()
		var sent []string
		for _, m := range mb.mails {
			path := "no link"
			if l := linkInMail.FindStringSubmatch(m.Text); l != nil {
				path = l[1]
			}
			sent = append(sent, m.To+" "+path)
		}
		mb.mu.Unlock()
		sort.Strings(sent)
		fmt.Fprintf(out, "mails sent: %q\n", sent)
	}
}

func (c *community) renderMoreTo(t *testing.T, s *store.Store, b *strings.Builder) {
	t.Helper()
	ctx := context.Background()
	l := s.NewLoader()
	w := store.Window{First: 100}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("render %s: %v", what, err)
		}
	}
	at := func(tm *time.Time) string {
		if tm == nil {
			return "-"
		}
		return fmt.Sprint(tm.Unix())
	}
	conv := func(label string, p *store.Page[*store.Conversation], err error) {
		t.Helper()
		must(label, err)
		fmt.Fprintf(b, "%s (%d):", label, p.Total)
		for _, cv := range p.Items {
			last := ""
			if cv.LastMessage != nil {
				last = cv.LastMessage.Text
			}
			fmt.Fprintf(b, " %s[%s at%d unread%d req%t %q]", cv.ID, cv.With, cv.UpdatedAt.Unix(), cv.UnreadCount, cv.IsRequest, last)
		}
		b.WriteString("\n")
	}
	admin := c.uid(0)
	for _, name := range c.users {
		uid := store.UserKey(name)
		if u, err := l.User(ctx, uid); err != nil || u == nil {
			must("user", err)
			continue
		}
		cs, err := l.Conversations(ctx, uid, w)
		conv("conversations of "+name, cs, err)
		rs, err := l.MessageRequests(ctx, uid, w)
		conv("message requests of "+name, rs, err)
		for _, cv := range append(cs.Items, rs.Items...) {
			ms, err := l.Messages(ctx, uid, cv.With, w)
			must("messages", err)
			fmt.Fprintf(b, "messages of %s with %s (%d):", name, cv.With, ms.Total)
			for _, m := range ms.Items {
				fmt.Fprintf(b, " [%s>%s %q d%t at%d ed%s]", m.Sender, m.Recipient, m.Text, m.Deleted, m.CreatedAt.Unix(), at(m.EditedAt))
			}
			b.WriteString("\n")
		}
		n, err := l.UnreadMessageCount(ctx, uid)
		must("unread messages", err)
		nn, err := l.UnreadNotificationCount(ctx, uid)
		must("unread notifications", err)
		fmt.Fprintf(b, "user %s: %d unread messages, %d unread notifications\n", name, n, nn)
		ns, err := l.Notifications(ctx, uid, w, false, nil)
		must("notifications", err)
		fmt.Fprintf(b, "notifications of %s (%d):", name, ns.Total)
		for _, n := range ns.Items {
			fmt.Fprintf(b, " %s[%s by %s %s %s %s at%d r%t]", n.ID, n.Kind, n.Actor, n.PostID, n.CommentID, n.ModActionID, n.CreatedAt.Unix(), n.Read)
		}
		b.WriteString("\n")
		sp, err := l.SavedPosts(ctx, uid, w, nil)
		must("saved", err)
		fmt.Fprintf(b, "saved by %s (%d):", name, sp.Total)
		for _, p := range sp.Items {
			fmt.Fprintf(b, " %s", p.ID)
		}
		b.WriteString("\n")
		addr, verified, err := s.Email(ctx, uid)
		must("email", err)
		fmt.Fprintf(b, "email of %s: %q %t\n", name, addr, verified)
		fmt.Fprintf(b, "watches and read state of %s:", name)
		for _, g := range c.groups {
			m, err := l.GroupWatch(ctx, uid, g)
			must("group watch", err)
			fmt.Fprintf(b, " %s=%s", g, m)
		}
		for _, id := range c.posts {
			p, err := l.Post(ctx, id)
			must("post", err)
			if p == nil {
				continue
			}
			m, err := l.PostWatch(ctx, uid, id)
			must("post watch", err)
			unread, read, err := l.ReadState(ctx, uid, p)
			must("read state", err)
			fmt.Fprintf(b, " %s=%s,%d,%t", id, m, unread, read)
		}
		b.WriteString("\n")
		ban, err := l.Ban(ctx, admin, "ban:site:"+name)
		must("site ban", err)
		if ban != nil {
			fmt.Fprintf(b, "site ban of %s: %q by %s at%d until %s\n", name, ban.Reason, ban.Moderator, ban.CreatedAt.Unix(), at(ban.Until))
		}
	}
	// As a viewer who hides NSFW posts sees them.
	hide := s.NewLoader()
	hide.HideNSFW(true)
	for _, g := range append([]string{""}, c.groups...) {
		p, err := hide.Posts(ctx, store.SortNew, g, w, nil)
		must("posts without nsfw", err)
		fmt.Fprintf(b, "posts without nsfw in %q (%d):", g, p.Total)
		for _, p := range p.Items {
			fmt.Fprintf(b, " %s", p.ID)
		}
		b.WriteString("\n")
	}
	for _, id := range c.posts {
		p, err := l.Post(ctx, id)
		must("post", err)
		if p == nil {
			continue
		}
		pins, err := l.PinnedIn(ctx, p)
		must("pins", err)
		fmt.Fprintf(b, "%s: nsfw%t spoiler%t removed%t locked%t pinned in %d\n", id, p.NSFW, p.Spoiler, p.Removed, p.Locked, len(pins))
		hp, err := hide.Post(ctx, id)
		must("post without nsfw", err)
		fmt.Fprintf(b, "%s hidden: %t\n", id, hp.NSFWHidden)
	}
	for _, g := range append([]string{""}, c.groups...) {
		if g != "" {
			gr, err := l.Group(ctx, g)
			must("group", err)
			if gr == nil {
				fmt.Fprintf(b, "group %s: none\n", g)
				continue
			}
			nsfw, err := l.GroupNSFW(ctx, gr)
			must("group nsfw", err)
			bans, err := l.GroupBans(ctx, admin, g, w)
			must("group bans", err)
			fmt.Fprintf(b, "group %s: nsfw %t, bans (%d):", g, nsfw, bans.Total)
			for _, x := range bans.Items {
				fmt.Fprintf(b, " %s[%q by %s until %s]", x.ID, x.Reason, x.Moderator, at(x.Until))
			}
			b.WriteString("\n")
		}
		ml, err := l.ModLog(ctx, g, w)
		must("mod log", err)
		fmt.Fprintf(b, "mod log %q (%d):", g, ml.Total)
		for _, a := range ml.Items {
			notice := "" // as its recipient reads it
			for i := range c.users {
				n, err := l.ModActionNotice(ctx, c.uid(i), a)
				must("notice", err)
				notice += n
			}
			r, lab := "", ""
			if a.Reason != nil {
				r = *a.Reason
			}
			if a.Label != nil {
				lab = string(*a.Label)
			}
			fmt.Fprintf(b, " [%s by %s in %q on %s %q %s until %s at%d notice %q]", a.Action, a.Moderator, a.Group, a.TargetID, r, lab, at(a.Until), a.CreatedAt.Unix(), notice)
		}
		b.WriteString("\n")
		rp, err := l.Reports(ctx, admin, g, false, w, store.ReportNeeds{})
		must("reports", err)
		fmt.Fprintf(b, "reports %q (%d):", g, rp.Total)
		for _, r := range rp.Items {
			res := ""
			if r.Resolution != nil {
				res = string(*r.Resolution)
			}
			fmt.Fprintf(b, " %s[%s %s by %s %q r%t %s by %s %s]", r.ID, r.PostID, r.CommentID, r.Reporter, r.Reason, r.Resolved, at(r.ResolvedAt), r.ResolvedBy, res)
		}
		b.WriteString("\n")
	}
}

// messageIDs matches the global id of a message, whose id holds random hex.
var messageIDs = regexp.MustCompile(`message:([a-z0-9_-]+):([a-z0-9_-]+):[0-9a-f]+`)

// exports returns the export (Store.Export) of every user of the community that has an account,
// without its sessions (their ids and times are the log-ins') and with the ids of messages left
// out: what two sites that got the same writes must agree on. Each export counts against the
// user's ExportsPerDay.
func (c *community) exports(t *testing.T, s *store.Store) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, name := range c.users {
		var doc bytes.Buffer
		err := s.Export(ctx, store.UserKey(name), "", &doc)
		if store.IsKind(err, store.KindNotFound) {
			fmt.Fprintf(&b, "export of %s: none\n", name)
			continue
		}
		if err != nil {
			t.Fatalf("export of %s: %v", name, err)
		}
		var m map[string]any
		if err := json.Unmarshal(doc.Bytes(), &m); err != nil {
			t.Fatalf("export of %s: %v", name, err)
		}
		delete(m, "sessions")
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "export of %s: %s\n", name, banVersion.ReplaceAllString(messageIDs.ReplaceAllString(string(out), "message:$1:$2:id"), "$1:v"))
	}
	return b.String()
}
