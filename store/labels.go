package store

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Content labels. A post may be labelled NSFW (not safe for work) and a spoiler, in its hash
// (fields nsfw and spoiler, "1" when set), by its author (createPost, editPost, setPostLabels)
// or by a moderator of one of its groups or an admin (setPostLabels). A viewer shows NSFW posts
// or not: the user hash's field nsfw ("1" when they do; absent, and so false, for a new account
// and for every anonymous reader), read by AuthenticateViewer with the session, in the same
// pipeline.
//
//   - NSFW-free copies. Every set of rankings — the site's and each group's, every sort and TOP
//     window — and every user's post list has a copy that holds only the posts that are not
//     NSFW (sfwRanking, userPostsSFW), in the same slot, written by the same derived writes
//     (rankingCalls, indexPost: the atomic step, then the copies with the version guard of
//     index.lua), so repairs and Rebuild keep them too. A viewer who does not show NSFW posts
//     reads the copy in place of the whole list: the same one pipeline per level, and a
//     totalCount that counts what they see. A label change raises the post's version, and the
//     post's re-index moves it in or out of every copy.
//   - Read-time guard. The loader of such a viewer (HideNSFW) also leaves NSFW posts out of every
//     page it builds (listedPost, postsByKey), which covers the lists that have no copy (saved
//     posts, search, the pushed part of the home feed) and a label change whose re-index is still
//     in flight; and a post read by id comes withheld (NSFWHidden: no title, body or URL), so
//     that a client can show a click-through.
//   - Spoilers are listed; their body is withheld unless a reader asks for it (ShownBody).
//   - The response cache keys every answer by the setting too (one shared answer per setting),
//     since the setting is known before the query runs.
//
// Memory: a post that is not NSFW is one more member in each of the 11 sorted sets of the site's
// rankings and of each of its groups', one more in its author's list, and one more version entry
// per set of rankings (the copies keep their own guards) — see docs/API.md, "Content labels".

// flag is a label as a script argument: "1" when set, "" when not.
func flag(b bool) string {
	if b {
		return "1"
	}
	return ""
}

// labelArgs are the script arguments of an optional label: "1" and its value to set it, "0" and
// "" to leave it.
func labelArgs(b *bool) []any {
	if b == nil {
		return []any{"0", ""}
	}
	return []any{"1", flag(*b)}
}

// ShownTitle is the title as the API shows it: nil when the post is withheld from the viewer.
func (p *Post) ShownTitle() *string {
	if p.NSFWHidden {
		return nil
	}
	return &p.Title
}

// ShownBody is the body as the API shows it: nil when the post is withheld from the viewer, and
// for a spoiler unless revealSpoiler.
func (p *Post) ShownBody(revealSpoiler *bool) *string {
	if p.NSFWHidden || (p.Spoiler && (revealSpoiler == nil || !*revealSpoiler)) {
		return nil
	}
	return &p.Body
}

// Withheld returns the post as a viewer who does not show NSFW posts may read it: an NSFW post
// without its title, body and URL, marked NSFWHidden.
func Withheld(p *Post) *Post {
	if p == nil || !p.NSFW {
		return p
	}
	c := *p
	c.Title, c.Body, c.URL, c.NSFWHidden = "", "", nil, true
	return &c
}

// HideNSFW makes the loader read for a viewer who does not show NSFW posts: listings read the
// NSFW-free copies, pages leave NSFW posts out, and a post read by id comes withheld. Call it
// before the first read. A new Loader hides nothing (the store's own reads see every post).
func (l *Loader) HideNSFW(hide bool) {
	l.mu.Lock()
	l.hideNSFW = hide
	l.mu.Unlock()
}

// hidesNSFW reports whether the loader reads for a viewer who does not show NSFW posts.
func (l *Loader) hidesNSFW() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hideNSFW
}

// rankingOf is the set of rankings of group ("" for the site) the loader's viewer reads.
func (l *Loader) rankingOf(group string) ranking {
	if l.hidesNSFW() {
		return l.s.k.sfwRanking(group)
	}
	return l.s.k.ranking(group)
}

// userPostsOf is the list of a user's posts the loader's viewer reads.
func (l *Loader) userPostsOf(uid string) string {
	if l.hidesNSFW() {
		return l.s.k.userPostsSFW(uid)
	}
	return l.s.k.userPosts(uid)
}

// ShowsNSFW reports whether user shows NSFW posts (false for "" and for a user who never said).
func (l *Loader) ShowsNSFW(ctx context.Context, user UserKey) (bool, error) {
	if user == "" {
		return false, nil
	}
	v, err := l.hashField(ctx, l.s.k.user(string(user)), "nsfw")
	return v == "1", err
}

// SetPostLabels sets or clears a post's labels (nil leaves one as it is), as its author, a
// moderator of one of its groups or an admin (KindForbidden for anyone else). A change moves the
// post in or out of the NSFW-free copies of its rankings and of its author's list, and is
// announced to its postChanged subscribers.
func (s *Store) SetPostLabels(ctx context.Context, actor UserKey, id string, nsfw, spoiler *bool) (*Post, error) {
	pid, err := PostKey(id)
	if err != nil {
		return nil, err
	}
	if actor == "" {
		return nil, &Error{Kind: KindUnauthenticated, Msg: "sign in to label a post"}
	}
	h, err := s.rdb.HMGet(ctx, s.k.post(pid), "author", "groups", "deleted").Result()
	if err != nil {
		return nil, fmt.Errorf("read post %s: %w", pid, err)
	}
	if str(h[0]) == "" || str(h[2]) == "1" {
		return nil, notFoundf("no such post")
	}
	via := ""
	if UserKey(str(h[0])) != actor {
		if via, err = s.authority(ctx, actor, splitGroups(str(h[1]))); err != nil {
			return nil, err
		}
	}
	n, err := s.allowWrite(ctx, string(actor), repairPost+":"+pid, onPost(pid))
	if err != nil {
		return nil, err
	}
	args := append(append([]any{string(actor), via}, labelArgs(nsfw)...), labelArgs(spoiler)...)
	reply, err := s.run(ctx, "post_labels", []string{s.k.post(pid)}, args...)
	if err != nil {
		return nil, err
	}
	p := s.postFromHash(pid, hashFromReply(reply))
	if p == nil {
		return nil, notFoundf("no such post")
	}
	if err := s.indexPost(ctx, p, nil); err != nil {
		return nil, err
	}
	s.settled(ctx, n)
	s.publishPostChanged(ctx, pid)
	return p, nil
}

// showNSFWRead is the read of whether uid shows NSFW posts, for AuthenticateViewer's pipeline.
func (s *Store) showNSFWRead(ctx context.Context, uid string, dst **redis.StringCmd) op {
	key := s.k.user(uid)
	return op{key: key, fill: func(p redis.Pipeliner) (redis.Cmder, redis.Cmder) {
		*dst = p.HGet(ctx, key, "nsfw")
		return *dst, nil
	}}
}
