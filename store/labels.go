package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
)

// Content labels. A post may be labelled NSFW (not safe for work) and a spoiler, in its hash
// (fields nsfw and spoiler, "1" when set), by its author (createPost, editPost, setPostLabels)
// or by a moderator of one of its groups or an admin (setPostLabels). A viewer shows NSFW posts
// or not: the user hash's field nsfw ("1" when they do; absent, and so false, for a new account
// and for every anonymous reader), read by AuthenticateViewer with the session, in the same
// pipeline.
//
//   - Two parts. Every set of rankings — the site's and each group's, every sort and TOP
//     window — and every user's post list keeps the posts that are not NSFW under its keys and
//     the NSFW posts apart, under their nsfwKey, in the same slot, disjoint (nsfw_lists.go). One
//     index call, under the list's one version guard, writes a post into its part and out of
//     the other (rankingCalls, userPostsCall), so the derived writes' repairs and Rebuild keep
//     the parts too. A viewer who does not show NSFW posts reads the first part: the same one
//     pipeline per level, and a totalCount that counts what they see. Any other viewer reads
//     both in the same pipeline, merged (postListRead): one command more, no copy. A label
//     change raises the post's version, and the post's re-index moves it between the parts.
//   - Read-time guard. The loader of such a viewer (HideNSFW) also leaves NSFW posts out of every
//     page it builds (listedPost, postsByKey), which covers the lists that are not in two parts (saved
//     posts, search, the pushed part of the home feed) and a label change whose re-index is still
//     in flight; and a post read by id comes withheld (NSFWHidden: no title, body or URL), so
//     that a client can show a click-through.
//   - Spoilers are listed; their body is withheld unless a reader asks for it (ShownBody).
//   - The response cache keys every answer by the setting too (one shared answer per setting),
//     since the setting is known before the query runs.
//
// Memory: the parts cost nothing per post (each post is in one of them); a list holding both
// kinds of posts has a few more keys — see docs/API.md, "Content labels".

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

// ShownTitle is the title as the API shows it: "" when the post is withheld from the viewer
// (NSFWHidden; the contract keeps Post.title non-null).
func (p *Post) ShownTitle() string {
	if p.NSFWHidden {
		return ""
	}
	return p.Title
}

// ShownBody is the body as the API shows it: "" when the post is withheld from the viewer, and
// for a spoiler unless revealSpoiler (the contract keeps Post.body non-null).
func (p *Post) ShownBody(revealSpoiler *bool) string {
	if p.NSFWHidden || (p.Spoiler && (revealSpoiler == nil || !*revealSpoiler)) {
		return ""
	}
	return p.Body
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
// part of their lists that is not NSFW, pages leave NSFW posts out, and a post read by id comes withheld. Call it
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
// post between the parts (NSFW or not) of its rankings and of its author's list, and is
// announced to its postChanged subscribers. A change by anyone but the author is a moderator's:
// each label put on or taken off is recorded in the moderation log (LABEL_POST, UNLABEL_POST,
// with the label and the moderator's reason, if any), and the author gets its MOD_ACTION notice
// (modnotices.go). The author's own change takes no reason (KindInvalid).
func (s *Store) SetPostLabels(ctx context.Context, actor UserKey, id string, nsfw, spoiler *bool, reason *string) (*Post, error) {
	pid, err := PostKey(id)
	if err != nil {
		return nil, err
	}
	if err := checkModReason(reason, false); err != nil {
		return nil, err
	}
	if actor == "" {
		return nil, &Error{Kind: KindUnauthenticated, Msg: "sign in to label a post"}
	}
	h, err := s.cmd().HMGet(ctx, s.k.post(pid), "author", "groups", "deleted", "nsfwVia", "spoilerVia").Result()
	if err != nil {
		return nil, fmt.Errorf("read post %s: %w", pid, err)
	}
	if str(h[0]) == "" || str(h[2]) == "1" {
		return nil, notFoundf("no such post")
	}
	via := ""
	if UserKey(str(h[0])) != actor {
		// A label a moderator put on comes off through the group it was put on in
		// (lib/label_keeper.lua): look for the actor's authority there first.
		groups := splitGroups(str(h[1]))
		for i, label := range []*bool{nsfw, spoiler} {
			if label != nil && !*label {
				if j := slices.Index(groups, str(h[3+i])); j > 0 {
					groups = append([]string{groups[j]}, slices.Delete(slices.Clone(groups), j, j+1)...)
				}
			}
		}
		if via, err = s.authority(ctx, actor, groups); err != nil {
			return nil, err
		}
	} else if reason != nil {
		return nil, &Error{Kind: KindInvalid, Msg: "a reason is for a moderator's change of someone else's post"}
	}
	scope := onPost(pid) // the author's own change
	if via != "" {
		scope = actingFor(via)
	}
	n, err := s.allowWrite(ctx, string(actor), repairPostChange+":"+pid, scope)
	if err != nil {
		return nil, err
	}
	if reason, err = s.filteredReason(reason); err != nil {
		return nil, err
	}
	args := append(append([]any{string(actor), via}, labelArgs(nsfw)...), labelArgs(spoiler)...)
	flag, text := reasonArgs(reason)
	args = append(args, s.now().UnixMilli(), pid, flag, text)
	outbox := s.k.postModOutbox(pid)
	reply, err := s.run(ctx, "post_labels", []string{s.k.post(pid), outbox, s.k.postTexts(pid)}, args...)
	if err != nil {
		return nil, err
	}
	arr, err := replyArray("post_labels", reply, 1)
	if err != nil {
		return nil, err
	}
	entries, err := replyHash("post_labels", arr[0])
	if err != nil {
		return nil, err
	}
	ph, err := replyHash("post_labels", arr[1:])
	if err != nil {
		return nil, err
	}
	p := s.postFromHash(pid, ph)
	if p == nil {
		return nil, notFoundf("no such post")
	}
	if err := s.indexPost(ctx, p, nil); err != nil {
		return nil, err
	}
	// A moderator's change is in the moderation log (LABEL_POST, UNLABEL_POST), with its notice
	// to the author; the post's repair flushes the outbox if the process stops first.
	if err := s.flushModLog(ctx, outbox, entries); err != nil {
		return nil, err
	}
	s.settled(ctx, n)
	s.publishPostChanged(ctx, pid)
	return p, nil
}

// showNSFWRead is the read of whether uid shows NSFW posts, for AuthenticateViewer's pipeline.
func (s *Store) showNSFWRead(ctx context.Context, uid string, dst **rdb.StringCmd) op {
	key := s.k.user(uid)
	return op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		*dst = p.HGet(ctx, key, "nsfw")
		return *dst, nil
	}}
}

// NSFW groups. A group labelled NSFW (its info's nsfw field, set by createGroup and updateGroup)
// makes every post in it NSFW. The set of NSFW groups ({nsfw}:groups, nsfwGroups) mirrors the
// labels, written after the group's script (nsfw_group.lua) and read again after the write, so
// that a mirror that read an older label than a concurrent change and landed after it is
// written over (mirrorGroupLabel), and derived again by the group's repair and by Rebuild. Every loader reads the set in its first pipeline (enqueue), so a post
// read in that pipeline or a later one is marked NSFW by its groups at no round trip of its own:
// reads are exact from the moment the set changes. The lists' parts follow: indexing a post
// takes its groups' labels into account (groupLabels), and a label change re-indexes the
// group's posts in the job engine, in chunks of relabelBatch from a cursor, like a fan-out, then
// once more a minute later for the posts indexed while the first pass ran. Until the passes are
// done the parts that are not NSFW still hold posts of a group just labelled (reads leave them
// out: the items shown are exact, but a page may be short and totalCount counts them), and
// those of a group whose label was taken off are still in the NSFW parts (they come in as the
// job reaches them). A viewer who shows NSFW posts reads both parts and sees every post.

// relabelBatch is how many posts one job of a group's label change re-indexes.
const relabelBatch = 100

// relabelAgain is when the second pass of a group's label change runs.
const relabelAgain = time.Minute

// jobRelabel is the job of a group's label change: "<group> <version> <pass> <cursor>".
const jobRelabel = "relabel"

// groupSet is a set of group names; nil holds none.
type groupSet map[string]bool

// any reports whether one of names is in the set.
func (s groupSet) any(names []string) bool {
	for _, n := range names {
		if s[n] {
			return true
		}
	}
	return false
}

// nsfwGroupsRead is the read of the set of NSFW groups.
func (l *Loader) nsfwGroupsRead() read {
	key := l.s.k.nsfwGroups()
	return read{key: "sm:" + key, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.SMembers(ctx, key)
	}}
}

// nsfwGroupSet returns the set of NSFW groups the loader read with its first batch (nil before
// any read, or when the read failed: the posts' reads, in the same or a later pipeline, then
// report the error).
func (l *Loader) nsfwGroupSet() groupSet {
	l.mu.Lock()
	c := l.nsfwGroups
	l.mu.Unlock()
	if c == nil {
		return nil
	}
	<-c.done // sent before any read that asks for it
	if c.err != nil {
		return nil
	}
	s, _ := l.parsed(c, func(c *call) any {
		names := c.cmd.(*rdb.StringSliceCmd).Val()
		s := make(groupSet, len(names))
		for _, n := range names {
			s[n] = true
		}
		return s
	}).(groupSet)
	return s
}

// groupLabels marks p NSFW when one of its groups is, for the writes that put it in the NSFW
// parts of its lists.
func (s *Store) groupLabels(ctx context.Context, p *Post) error {
	if p == nil || p.NSFW || len(p.GroupNames) == 0 {
		return nil
	}
	in, err := s.cmd().SMIsMember(ctx, s.k.nsfwGroups(), strs2any(p.GroupNames)...).Result()
	if err != nil {
		return fmt.Errorf("read the labels of the groups of post %s: %w", p.Key(), err)
	}
	for _, b := range in {
		p.NSFW = p.NSFW || b
	}
	return nil
}

func strs2any(v []string) []any {
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}

// GroupNSFW loads whether a group is labelled NSFW.
func (l *Loader) GroupNSFW(ctx context.Context, g *Group) (bool, error) {
	c, err := l.get(ctx, l.groupInfoRead(g.Name))
	if err != nil {
		return false, err
	}
	return l.groupInfoOf(c).nsfw, nil
}

// labelGroup mirrors group g's label (from its info hash) into the set of NSFW groups and, when
// that changed the set, queues the re-index of its posts. A group's creation, its update and its
// repair call it after the group's script.
func (s *Store) labelGroup(ctx context.Context, g string) error {
	nsfw, ver, err := s.readGroupLabel(ctx, g)
	if err != nil {
		return err
	}
	return s.mirrorGroupLabel(ctx, g, nsfw, ver)
}

// readGroupLabel reads group g's label and the info version it is of, at one instant.
func (s *Store) readGroupLabel(ctx context.Context, g string) (nsfw, ver string, err error) {
	v, err := s.cmd().HMGet(ctx, s.k.groupInfo(g), "nsfw", "ver").Result()
	if err != nil {
		return "", "", fmt.Errorf("read the label of group %s: %w", g, err)
	}
	return str(v[0]), str(v[1]), nil
}

// mirrorGroupLabel writes group g's label nsfw, read at info version ver, into the set of NSFW
// groups, queues the re-index of its posts when that changed the set, and reads the label again:
// if the info moved on meanwhile, a concurrent change may have mirrored its label before this
// write landed over it, so the label read now is written in its turn. The last write to the set
// is then always of a label read after every change whose mirror came before it.
func (s *Store) mirrorGroupLabel(ctx context.Context, g, nsfw, ver string) error {
	for range 10 {
		reply, err := s.run(ctx, "nsfw_group", []string{s.k.nsfwGroups(), s.k.nsfwRelabel()}, g, nsfw, ver)
		if err != nil {
			return err
		}
		changed, err := replyInt("nsfw_group", reply)
		if err != nil {
			return err
		}
		if changed == 1 {
			if err := s.jobs.Enqueue(ctx, relabelJob(g, ver, 1, "0", time.Time{})); err != nil {
				return err
			}
		}
		again, now, err := s.readGroupLabel(ctx, g)
		if err != nil {
			return err
		}
		if now == ver {
			return nil
		}
		nsfw, ver = again, now
	}
	return fmt.Errorf("mirror the label of group %s: it kept changing", g)
}

// relabelJob is the job that re-indexes a chunk of group g's posts from a ZSCAN cursor, in pass
// 1 or 2 of the change of its label to version ver.
func relabelJob(g, ver string, pass int, cursor string, at time.Time) jobs.Job {
	arg := fmt.Sprintf("%s %s %d %s", g, ver, pass, cursor)
	return jobs.Job{ID: jobRelabel + ":" + strings.ReplaceAll(arg, " ", ":"), Kind: jobRelabel, Arg: arg, At: at}
}

// runRelabelJob re-indexes one chunk of a group's posts (the members of its NEW ranking, by
// ZSCAN, which returns every member present for the whole scan: the part that is not NSFW, then
// the NSFW part): each post's version is raised
// (bump.lua), so that the derived writes that follow replace its entries, and the post indexed
// again with its groups' labels. It queues the next chunk before it returns; after the last
// chunk of the first pass, the second pass is queued to start relabelAgain later. A pass of a
// change that a later change of the label has superseded (nsfwRelabel names another version)
// stops: the later one's passes re-index every post with the labels as they are then, so that a
// label turned on and off again and again re-indexes the group's posts once, not once a change.
func (s *Store) runRelabelJob(ctx context.Context, j jobs.Job) error {
	f := strings.Fields(j.Arg)
	if len(f) != 4 {
		return fmt.Errorf("%s job: bad argument %q", j.Kind, j.Arg)
	}
	g, ver, pass, cursor := f[0], f[1], f[2], f[3]
	latest, err := s.cmd().HGet(ctx, s.k.nsfwRelabel(), g).Result()
	if err != nil && !isNil(err) {
		return fmt.Errorf("relabel group %s: %w", g, err)
	}
	if latest != "" && latest != ver {
		return nil // superseded
	}
	// The part that is not NSFW is scanned first, then the NSFW part ("n" before the cursor).
	set, part := s.k.ranking(g).new, ""
	if c, ok := strings.CutPrefix(cursor, "n"); ok {
		set, part, cursor = nsfwKey(set), "n", c
	}
	at, err := strconv.ParseUint(cursor, 10, 64)
	if err != nil {
		return fmt.Errorf("%s job: bad cursor %q", j.Kind, cursor)
	}
	pids, next, err := s.cmd().ZScan(ctx, set, at, "", relabelBatch).Result()
	if err != nil {
		return fmt.Errorf("relabel group %s: %w", g, err)
	}
	for i := 0; i < len(pids); i += 2 { // members and scores alternate
		reply, err := s.run(ctx, "bump", []string{s.k.post(pids[i]), s.k.postTexts(pids[i])})
		if err != nil {
			return err
		}
		h, err := replyHash("bump", reply)
		if err != nil {
			return err
		}
		if p := s.postFromHash(pids[i], h); p != nil {
			if err := s.indexPostIn(ctx, p, nil, false, nil); err != nil {
				return err
			}
		}
	}
	switch {
	case next != 0:
		return s.jobs.Enqueue(ctx, relabelJob(g, ver, int(atoi64(pass)), part+strconv.FormatUint(next, 10), time.Time{}))
	case part == "":
		return s.jobs.Enqueue(ctx, relabelJob(g, ver, int(atoi64(pass)), "n0", time.Time{}))
	case pass == "1":
		return s.jobs.Enqueue(ctx, relabelJob(g, ver, 2, "0", s.now().Add(relabelAgain)))
	}
	return nil
}

// relabelGroups mirrors every group's label into the set of NSFW groups, for Rebuild (before it
// indexes the posts, which read the set).
func (s *Store) relabelGroups(ctx context.Context) error {
	return s.scanKeys(ctx, s.k.prefix+"{g:*}:info", func(key string) error {
		g, ok := strings.CutSuffix(strings.TrimPrefix(key, s.k.prefix+"{g:"), "}:info")
		if !ok || !validGroupName(g) {
			return nil
		}
		nsfw, err := s.cmd().HGet(ctx, key, "nsfw").Result()
		if err != nil && !isNil(err) {
			return fmt.Errorf("read the label of group %s: %w", g, err)
		}
		_, err = s.run(ctx, "nsfw_group", []string{s.k.nsfwGroups(), s.k.nsfwRelabel()}, g, nsfw, "")
		return err
	})
}
