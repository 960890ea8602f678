package store

import (
	"strconv"
	"strings"
)

// keys builds every Redis key the store uses. All keys start with the configured prefix, and each
// aggregate's keys share one hash tag so that a Lua script touching them runs on one slot of a
// Redis Cluster: {u:<user>} for a user, {n:<user>} for a user's notification inbox, {p:<post>}
// for a post and its thread, {g:<group>} for a group's rankings, {r:all} for the site-wide
// rankings.
type keys struct {
	prefix string
	// site is ranking(""), made once by newKeys: every front page names it, and its keys were
	// thirteen allocations a request; nil in a keys made otherwise, which makes it on each call.
	site *ranking
}

// newKeys returns the keys under prefix.
func newKeys(prefix string) keys {
	k := keys{prefix: prefix}
	site := k.ranking("")
	k.site = &site
	return k
}

// user is a hash: name, created (Unix ms), pass (argon2id hash, compact: see encodeHash), bio,
// avatar, nsfw, email, emailv (or, for a deleted account, the marker: created, deleted, erase,
// email, emailv when verified), and the user's sessions, a field each (sessionField).
func (k keys) user(uid string) string { return k.prefix + "{u:" + uid + "}" }

// sessionFieldPrefix starts the fields of a user's hash that hold sessions; no other field of a
// user hash starts with it, and every read of a user's profile names its fields (userFields).
const sessionFieldPrefix = "s:"

// sessionField is the field of a user's hash that holds session id (see sessionID): when the
// session expires (Unix ms), which each use moves to a full TTL from then. A token names its user
// (see sessions.go), so that its session lives in its user's hash, and every session of a user
// can be ended in one script.
func sessionField(id string) string { return sessionFieldPrefix + id }

// userIn is head followed by the key of user uid, made in one allocation (see hashRead).
func (k keys) userIn(head, uid string) string { return head + k.prefix + "{u:" + uid + "}" }

// userPosts is a sorted set of the user's post ids scored by publish time (ms).
func (k keys) userPosts(uid string) string { return k.user(uid) + ":posts" }

// userPostsVer is a hash post id → post version guarding userPosts.
func (k keys) userPostsVer(uid string) string { return k.user(uid) + ":posts:ver" }

// userComments is a sorted set of the user's live comments ("<post>:<number>", "17:4") scored by
// creation time (ms); userCommentsVer a hash member → comment version guarding it (see
// user_comments.go).
func (k keys) userComments(uid string) string    { return k.user(uid) + ":comments" }
func (k keys) userCommentsVer(uid string) string { return k.user(uid) + ":comments:ver" }

// userIdem is a string holding the post id a client's idempotency key created (expires).
func (k keys) userIdem(uid, digest string) string { return k.user(uid) + ":idem:" + digest }

// userIdemScheduled is present (and expires with userIdem) when the key's first request
// scheduled its post (see allocatePost). It is a key of its own, not a mark in userIdem's value,
// so that a process of an older release, which reads that value as a post id, reads one.
func (k keys) userIdemScheduled(uid, digest string) string { return k.userIdem(uid, digest) + ":s" }

// userRate is a sorted set of the user's recent writes scored by time (ms), for rate limiting.
func (k keys) userRate(uid string) string { return k.user(uid) + ":rate" }

// userExports is a sorted set of the user's recent exports scored by time (ms), for the limit
// on exports (Options.ExportsPerDay).
func (k keys) userExports(uid string) string { return k.user(uid) + ":exports" }

// userFails is a sorted set of the recent failed log-ins on the account, scored by time (ms).
func (k keys) userFails(uid string) string { return k.user(uid) + ":fails" }

// userAddrFails is a sorted set of the recent failed log-ins on the account from a client address
// the account knows (see userKnown), scored by time (ms).
func (k keys) userAddrFails(uid, addr string) string { return k.userFails(uid) + ":" + addr }

// userKnown is a sorted set of the client addresses the user logged in from, address → until
// when the account knows it (Unix ms).
func (k keys) userKnown(uid string) string { return k.user(uid) + ":known" }

// userVoted is a string: the log of the items the user voted on (see votes_log.go).
func (k keys) userVoted(uid string) string { return k.user(uid) + ":voted" }

// userVotedGen is a string: how many times the user's vote log was compacted (see votes_log.go).
func (k keys) userVotedGen(uid string) string { return k.user(uid) + ":voted:n" }

// admins is a hash of the accounts granted site admin by the operator (`agora admin grant`),
// user key → when (Unix ms); adminNames a hash of the names the admins setting has named,
// name → when it first named it (Unix ms). See admins.go.
func (k keys) admins() string     { return k.prefix + "{admins}" }
func (k keys) adminNames() string { return k.admins() + ":named" }

// addrFails is a sorted set of the recent failed log-ins from a client address, scored by time.
func (k keys) addrFails(addr string) string { return k.prefix + "{a:" + addr + "}:fails" }

// addrSignUps is a sorted set of the recent sign-ups from a client address, scored by time.
func (k keys) addrSignUps(addr string) string { return k.prefix + "{a:" + addr + "}:signups" }

// addrQueries is a sorted set of the recent persisted-query registrations from a client address,
// scored by time.
func (k keys) addrQueries(addr string) string { return k.prefix + "{a:" + addr + "}:queries" }

// persistedDocs is a hash of persisted queries, SHA-256 (64 lower-case hex digits) → document,
// and persistedUsed a sorted set of the same hashes by last use (ms): one of 16 shards, chosen by
// the hash's first digit, each bounded (see persisted.go).
func (k keys) persistedDocs(shard byte) string { return k.prefix + "{pq:" + string(shard) + "}:docs" }
func (k keys) persistedUsed(shard byte) string { return k.prefix + "{pq:" + string(shard) + "}:used" }

// following is a sorted set of the users uid follows (user keys) scored by follow time (ms). It is
// the authoritative record of the follow graph.
func (k keys) following(uid string) string { return k.user(uid) + ":following" }

// scheduled is a sorted set of the user's scheduled posts' ids scored by publish time (ms): its
// members past their time are expired by the next write (per-member expiry), so the members
// after now are the posts still pending.
func (k keys) scheduled(uid string) string { return k.user(uid) + ":scheduled" }

// drafts is a hash of the user's scheduled posts: post id → the post to publish, as JSON
// (see draft in schedule.go), until its publish job has published it.
func (k keys) drafts(uid string) string { return k.user(uid) + ":drafts" }

// cancelledDrafts is a sorted set of the user's scheduled posts cancelled before publication:
// post id → the time of the cancellation (ms), the newest MaxCancelledDrafts, so that cancelling
// one again answers with its id as every repeated deletion does (see schedule.lua).
func (k keys) cancelledDrafts(uid string) string { return k.user(uid) + ":cancelled" }

// followingSeq is a string counter raised by every change to following(uid); it versions the
// follower-side records derived from it.
func (k keys) followingSeq(uid string) string { return k.user(uid) + ":following:seq" }

// followers is a sorted set of the users following uid scored by follow time (ms), mirrored from
// their following sets.
func (k keys) followers(uid string) string { return k.user(uid) + ":followers" }

// followersVer is a hash follower user key → the followingSeq version followers(uid) last applied.
func (k keys) followersVer(uid string) string { return k.user(uid) + ":followers:ver" }

// push is a set of at most FeedOptions.FanoutLimit followers of uid whose feeds receive uid's new
// posts when they are published.
func (k keys) push(uid string) string { return k.user(uid) + ":push" }

// pull is a sorted set of users uid follows whose posts uid's feed reads at read time (they do not
// push to uid), scored by follow time (ms).
func (k keys) pull(uid string) string { return k.user(uid) + ":pull" }

// pullVer is a hash followee user key → the followingSeq version pull(uid) last applied.
func (k keys) pullVer(uid string) string { return k.user(uid) + ":pull:ver" }

// feed is a sorted set of post ids pushed to uid's home feed, scored by publish time (ms), trimmed
// to the newest FeedOptions.Cap.
func (k keys) feed(uid string) string { return k.user(uid) + ":feed" }

// feedBy is a hash post id → author user key for every member of feed(uid).
func (k keys) feedBy(uid string) string { return k.user(uid) + ":feed:by" }

// karma is a hash: total (the user's karma), ver (raised whenever total changes).
func (k keys) karma(uid string) string { return k.user(uid) + ":karma" }

// karmaItems is a hash item global id (post or comment) → "<item version> <net votes>", the
// contribution of each item to karma(uid).
func (k keys) karmaItems(uid string) string { return k.user(uid) + ":karma:items" }

// userNames is a sorted set (all scores 0) of every user key, for BYLEX autocomplete.
func (k keys) userNames() string { return k.prefix + "{users}" }

// leaderboard is a sorted set of user keys scored by minus their karma, so that ascending order is
// highest karma first with ties by user key.
func (k keys) leaderboard() string { return k.prefix + "{lb}:karma" }

// leaderboardVer is a hash user key → the karma version leaderboard() last applied.
func (k keys) leaderboardVer() string { return k.prefix + "{lb}:karma:ver" }

// layout is the hash that records the layout of the keyspace (see layout.go).
func (k keys) layout() string { return k.prefix + "{meta}:layout" }

// postSeq is a string counter that allocates post ids.
func (k keys) postSeq() string { return k.prefix + "seq:post" }

// post is a hash: title, body, url, author, aname (the author's name; see NamedAuthor), created
// (ms), closes (ms), up, down, ver, groups (comma-separated), comments (live comment count),
// deleted ("1" on a tombstone).
func (k keys) post(pid string) string { return k.prefix + "{p:" + pid + "}" }

// postIn returns head, the key of post pid, and tail, as one string made in one allocation, and
// the key as a part of it: a loader read's cache key holds its Redis key (see hashRead).
func (k keys) postIn(head, pid, tail string) (all, key string) {
	all = head + k.prefix + "{p:" + pid + "}" + tail
	return all, all[len(head) : len(all)-len(tail)]
}

// postVotes is a hash voter user id → "1" or "-1".
func (k keys) postVotes(pid string) string { return k.post(pid) + ":votes" }

// ranking holds the keys of one set of post rankings: the whole site (group "") or one group.
type ranking struct {
	hot, new, top string // sorted sets of post ids by HOT score, publish time (ms) and net votes
	// active, controversial and comments are sorted sets of the same posts by last activity (the
	// publish time, or the newest comment's creation time if later; ms), by Reddit's
	// controversy and by comment count.
	active, controversial, comments string
	// windows are sorted sets by net votes of the posts published within each TopWindows
	// window (same order), trimmed on writes and by trim jobs, filtered exactly at read time (see
	// windows.lua and windows_trim.go).
	windows [len(TopWindows)]string
	trim    string // hash window set → its trim mark (ms): every post published earlier is out
	ver     string // hash post id → the post version the rankings last reflected
}

func (k keys) ranking(group string) ranking {
	if group == "" && k.site != nil {
		return *k.site
	}
	tag := k.prefix + "{r:all}"
	if group != "" {
		tag = k.prefix + "{g:" + group + "}"
	}
	return rankingAt(tag)
}

// nsfwKey is the key of the NSFW part of a post list (see labels.go): the list's key with ":n"
// after its hash tag, in the same slot. The site's and groups' rankings ("{r:all}:hot" and
// "{r:all}:n:hot") and the users' post lists ("{u:ann}:posts" and "{u:ann}:n:posts") keep the
// posts that are not NSFW under their key and the NSFW ones under this one, disjoint.
func nsfwKey(key string) string {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return key + ":n"
	}
	j := strings.IndexByte(key[i:], '}')
	if j < 0 {
		return key + ":n"
	}
	return key[:i+j+1] + ":n" + key[i+j+1:]
}

// nsfw is the NSFW part of a set of rankings: its sorted sets, under nsfwKey of each, sharing the
// rankings' version hash and trim marks (one guard per post for both parts, so that one index
// call moves a post from one part to the other).
func (r ranking) nsfw() ranking {
	n := ranking{hot: nsfwKey(r.hot), new: nsfwKey(r.new), top: nsfwKey(r.top), active: nsfwKey(r.active),
		controversial: nsfwKey(r.controversial), comments: nsfwKey(r.comments), trim: r.trim, ver: r.ver}
	for i, w := range r.windows {
		n.windows[i] = nsfwKey(w)
	}
	return n
}

// nsfwGroups is a set of the names of the groups labelled NSFW, mirrored from their info hashes'
// nsfw field (see labels.go); every loader reads it in its first pipeline.
func (k keys) nsfwGroups() string { return k.prefix + "{nsfw}:groups" }

// nsfwRelabel is, by group, the info version of the label change whose re-index of the group's
// posts is the one to run (nsfw_group.lua): the re-index of an earlier change stops.
func (k keys) nsfwRelabel() string { return k.prefix + "{nsfw}:relabel" }

// userPostsNSFW is the NSFW part of userPosts: the user's NSFW posts, guarded by userPostsVer.
func (k keys) userPostsNSFW(uid string) string { return nsfwKey(k.userPosts(uid)) }

// legacySFWRanking and legacyUserPostsSFW(Ver) are the NSFW-free copies of layout 3 (a second
// entry for every post that is not NSFW), which the migration to layout 4 deletes.
func (k keys) legacySFWRanking(group string) ranking {
	r := k.ranking(group)
	return rankingAt(strings.TrimSuffix(r.ver, ":ver") + ":s")
}
func (k keys) legacyUserPostsSFW(uid string) string    { return k.user(uid) + ":posts:s" }
func (k keys) legacyUserPostsSFWVer(uid string) string { return k.user(uid) + ":posts:s:ver" }

// rankingAt is the set of rankings whose keys start with tag.
func rankingAt(tag string) ranking {
	r := ranking{hot: tag + ":hot", new: tag + ":new", top: tag + ":top", ver: tag + ":ver",
		active: tag + ":act", controversial: tag + ":con", comments: tag + ":cmt", trim: tag + ":trim"}
	for i, w := range TopWindows {
		r.windows[i] = tag + ":t" + w.Name
	}
	return r
}

// indexed lists the sorted sets of the rankings that index.lua writes, in the order of
// rankingCalls' scores: HOT, NEW, ACTIVE, CONTROVERSIAL, MOST_COMMENTS, TOP.
func (r ranking) indexed() []string {
	return []string{r.hot, r.new, r.active, r.controversial, r.comments, r.top}
}

// sets lists every sorted set of the rankings, the windows last but one and top last (see
// dropOrphans, which scans the last).
func (r ranking) sets() []string {
	return append([]string{r.hot, r.new, r.active, r.controversial, r.comments}, append(r.windows[:], r.top)...)
}

// groups is a sorted set (all scores 0) of the names of the groups that exist, for BYLEX lookups;
// read in rank order it is the directory of groups by NAME.
func (k keys) groups() string { return k.prefix + "{groups}" }

// groupDir holds the keys of the directory of groups (see directory.go), in the registry's slot:
// sorted sets of the groups that exist, scored by minus what they are ordered by, so that
// ascending order is "most first" with ties by name.
type groupDir struct {
	pop    string // minus the member count
	new    string // minus the creation time (ms)
	active string // minus the publish time of the latest post (ms); the creation time without posts
	name   string // all scores 0: name order (the full directory's is the registry, groups())
	ver    string // hash group name → the group's revision the directory last applied
}

func (k keys) groupDir() groupDir {
	tag := k.groups()
	return groupDir{pop: tag + ":pop", new: tag + ":new", active: tag + ":active", name: tag, ver: tag + ":ver"}
}

// sfwGroupDir is the directory's NSFW-free copy (see directory.go), in the same slot: the groups
// that are not labelled NSFW, in the same four orders, with guards of its own.
func (k keys) sfwGroupDir() groupDir {
	tag := k.groups() + ":s"
	return groupDir{pop: tag + ":pop", new: tag + ":new", active: tag + ":active", name: tag + ":name", ver: tag + ":ver"}
}

// A post's comment thread lives in the post's hash slot. Comments are numbered per post. The
// members of the reply indexes write a comment number with 12 digits ("000000000004", the stored
// form), so that they sort by number bytewise; a comment's own keys (its hash, its reply orders)
// name it as its thread's ids set does, without the zeros ("{p:17}:c:4", "{p:17}:c:4:rt"): a key
// of up to 28 bytes takes Redis a 32-byte allocation where the padded one took 48 (layout 6; see
// layout_shortkeys.go, which renames the keys of earlier layouts). A script turns a member into
// its comment's key by dropping the zeros (scripts/lib/reply_orders.lua). The number "0" stands
// for the post itself: its reply indexes hold the top-level comments. The thread's named keys
// (ids, body, live, v<bucket>, idem:<digest>) start with a letter, so that none is ever a
// comment's: keep every new one so. The comment scripts take these keys in KEYS, so the names
// here and in store/scripts/*comment*.lua must agree.

// thread is the prefix of every key of a post's comment thread (not a key itself).
func (k keys) thread(pid string) string { return k.inThread(pid, "", "") }

// inThread is thread(pid) + num + suffix, built in one allocation: a thread page names a thousand
// keys of its thread (TestThreadKeys holds it to thread). num is a comment's short number or a
// named key's name; the keys of a comment pass their number through shortNum (which does not
// allocate).
func (k keys) inThread(pid, num, suffix string) string {
	return k.prefix + "{p:" + pid + "}:c:" + num + suffix
}

// comment is a hash: m, the fields written once, packed as "<parent> <created> <closes> <depth>
// <ord>" (parent as in ids, "0" for top level; created as "~" and its ms in base 36, closes as "+"
// and its distance from created in base 36, decimal ms in hashes of layout 6; ord the comment's
// creation ordinal, see readstate.go, empty for a comment without one); n, the author's name (see
// NamedAuthor), whose lower case is the author's user key; a, the author, only when the hash has
// no name (unknown, or taken off by disown); then edited (ms, absent until edited), up, down,
// replies (direct replies in the tree; the three absent until first raised, see
// layout_compact.go), ver, deleted ("1" on a tombstone, which has no body),
// removed, removedVia, held and o (see replyMark). Its body is in commentBodies. A comment removed
// for good leaves a short-lived marker instead: gone = "1" and author, so that a repeated delete
// succeeds. See comment_meta.go.
//
// Layout 5 kept what m, a and n hold as fields of their own: parent (stored form), author,
// created, closes, depth, ord, aname. Until the migration from layout 5 has packed every hash
// (layout_comments.go), a comment's hash may have either shape, and every reader and writer
// takes both: a hash with m is packed and has none of those fields; one without m is of layout 5
// (or a removal marker). Scripts read them only through scripts/lib/comment_meta.lua, Go through
// comment_meta.go; a script that rewrites the name (name_authors, disown) keeps the hash's shape.
func (k keys) comment(pid, num string) string { return k.inThread(pid, shortNum(num), "") }

// commentIn returns head, the key of comment num of post pid, and tail, as one string made in
// one allocation, and the key as a part of it: a loader read's cache key holds its Redis key.
func (k keys) commentIn(head, pid, num, tail string) (all, key string) {
	all = head + k.prefix + "{p:" + pid + "}:c:" + shortNum(num) + tail
	return all, all[len(head) : len(all)-len(tail)]
}

// commentBodies is a hash of the texts of the thread's comments: number as in ids ("4", since
// layout 7; the stored form before) → body. The body lives
// here, apart from the comment's hash, so that the hash holds only short values and stays
// listpack-encoded: one value longer than hash-max-listpack-value (64 bytes by default) turns the
// whole hash into a hashtable, ~960 bytes for a comment with a 200-byte body instead of ~300
// (layout 3; before it the body was the hash's field body, which readers still take when the
// thread has no entry, so that a keyspace being migrated reads right).
func (k keys) commentBodies(pid string) string { return k.inThread(pid, "body", "") }

// postTexts is where a post keeps its body apart from its hash (layout 5): the thread's bodies
// (commentBodies), whose comment fields are numbers, holds it as field postTextBody (see
// scripts/lib/post_texts.lua), so that a post's hash whose title and url are short holds only
// short values and stays listpack-encoded: ~640 bytes less for a post with a 400-byte body. Every
// post script that writes or replies with the post takes this key just before its revision counter.
func (k keys) postTexts(pid string) string { return k.commentBodies(pid) }

// postTextBody is the field of a post's body in postTexts.
const postTextBody = "b"

// commentVotes is a hash of the votes on the comments of one bucket of a thread: the comments
// numbered b·commentVoteBucket to (b+1)·commentVoteBucket − 1 share the bucket b, {p:<id>}:c:v<b>
// ("v0", "v1", …), whose fields are "<number as in ids>:<voter user key>" ("4:alice") → "1" or
// "-1" (commentVote names them). A bucket holds the votes of several comments, so that a thread's
// comments with a vote or two share a key (~80 bytes of key a comment with votes saved) and each
// bucket stays listpack-encoded for typical threads (layout 6; layout 5 kept a hash per comment,
// legacyCommentVotes). num is in stored form ("000000000004").
func (k keys) commentVotes(pid, num string) string {
	return k.inThread(pid, "v", commentVoteBucketOf(num))
}

// commentVoteBucketOf is the bucket of comment num (stored form) in its key ("2" for 17).
func commentVoteBucketOf(num string) string {
	return strconv.FormatInt(atoi64(num)/commentVoteBucket, 10)
}

// commentVote returns the bucket (commentVotes) and the field of voter's vote on comment num
// (stored form) of post pid.
func (k keys) commentVote(pid, num, voter string) (key, field string) {
	_, key, field = k.commentVoteIn("", pid, num, voter)
	return key, field
}

// commentVoteIn is commentVote's key and field as parts of one string made in one allocation,
// head + key + "\x00" + field: a loader read's cache key holds its Redis key and field.
func (k keys) commentVoteIn(head, pid, num, voter string) (all, key, field string) {
	// The field is as scripts/lib/comment_votes.lua names it.
	all = head + k.prefix + "{p:" + pid + "}:c:v" + commentVoteBucketOf(num) + "\x00" + shortNum(num) + ":" + voter
	end := len(all) - len(voter) - len(shortNum(num)) - 2
	return all, all[len(head):end], all[end+1:]
}

// commentVoteBucket is how many comment numbers share a bucket of votes (commentVotes). Eight
// keeps a bucket listpack-encoded at Redis's default hash-max-listpack-entries (512) up to about 64
// votes a comment, and under the project's own bound of 128 fields up to 16 a comment; a
// larger bucket saves at most 4 bytes a vote more on small threads and turns hot threads' buckets
// into hashtables (~70 bytes a vote). See docs/PERFORMANCE.md, "Comment votes in buckets", and
// scripts/cvote-buckets.sh, which measured it.
const commentVoteBucket = 8

// repliesByTime is a sorted set of a comment's (or, for num "0", the post's) direct replies scored
// by creation time (ms); ties order by number. NEW reads it backwards, OLD forwards.
func (k keys) repliesByTime(pid, num string) string { return k.inThread(pid, shortNum(num), ":rt") }

// repliesByTop is a sorted set of the same replies scored by net votes; ties order by number, so
// read backwards it is "most net votes first, then newest". Only a parent with replyOrdersAt
// replies or more keeps it, and the BEST and CONTROVERSIAL orders below (see replyMark); the
// reader orders the replies of one with fewer from their votes (comment_orders.go).
func (k keys) repliesByTop(pid, num string) string { return k.inThread(pid, shortNum(num), ":rs") }

// repliesByBest is a sorted set of the same replies scored by the lower bound of the Wilson score
// interval of their votes (see Wilson); ties order by number, as in repliesByTop.
func (k keys) repliesByBest(pid, num string) string { return k.inThread(pid, shortNum(num), ":rb") }

// repliesByControversy is a sorted set of the same replies scored by Controversy; ties order by
// number, as in repliesByTop.
func (k keys) repliesByControversy(pid, num string) string {
	return k.inThread(pid, shortNum(num), ":rc")
}

// appendCommentKeys appends to keys the seven keys of comment num that delete_comment and
// sweep_thread take for each comment they may drop: its hash, its votes bucket, its reply orders
// (replyOrders) and its votes hash of layout 5 (legacyCommentVotes).
func (k keys) appendCommentKeys(keys []string, pid, num string) []string {
	keys = append(keys, k.comment(pid, num), k.commentVotes(pid, num))
	keys = append(keys, k.replyOrders(pid, num)...)
	return append(keys, k.legacyCommentVotes(pid, num))
}

// replyMark is the hash that marks whether parent num keeps its TOP, BEST and CONTROVERSIAL
// orders (field o, see scripts/lib/reply_orders.lua): the comment's hash, or the post's for the
// top-level comments (num "0").
func (k keys) replyMark(pid, num string) string {
	if num == topLevel {
		return k.post(pid)
	}
	return k.comment(pid, num)
}

// replyOrders lists the sorted sets of the direct replies of num (topLevel for the post) in the
// order the comment scripts take them: time, TOP, BEST, CONTROVERSIAL. Every order holds the same
// members; a script that adds or removes a reply writes them all.
func (k keys) replyOrders(pid, num string) []string {
	return []string{k.repliesByTime(pid, num), k.repliesByTop(pid, num), k.repliesByBest(pid, num),
		k.repliesByControversy(pid, num)}
}

// threadIDs is a set of the numbers of the comments in the thread (tombstones included), so that
// deleting the post can find and drop every comment key in bounded steps. Its members are the
// numbers as in ids ("4", not "000000000004"), which Redis keeps as an intset: 2 to 8 bytes a
// comment instead of a hashtable's ~60 (layout 3).
func (k keys) threadIDs(pid string) string { return k.inThread(pid, "ids", "") }

// liveComments is a bitmap of the thread's live comments by creation ordinal (the comment hash's
// ord, 1, 2, …): a bit is set while the comment counts in the post's comments. Read state counts
// the bits past a reader's mark (see readstate.go). Comments written before it existed have no
// ordinal and no bit.
func (k keys) liveComments(pid string) string { return k.inThread(pid, "live", "") }

// postWatch is a hash user key → watch mode ("A" ALL, "M" MUTED) of the users who chose a mode
// other than REPLIES for the post's thread; postWatchAll is a set of those with ALL, which the
// fan-out of a new comment scans (see watch.go).
func (k keys) postWatch(pid string) string    { return k.post(pid) + ":watch" }
func (k keys) postWatchAll(pid string) string { return k.post(pid) + ":watch:all" }

// groupWatch and groupWatchAll are postWatch and postWatchAll for a group: ALL there notifies of
// new posts.
func (k keys) groupWatch(group string) string    { return k.prefix + "{g:" + group + "}:watch" }
func (k keys) groupWatchAll(group string) string { return k.prefix + "{g:" + group + "}:watch:all" }

// userWatches is a sorted set of what the user chose a watch mode for — "p:<post>" or
// "g:<group>" → when they last chose one (Unix ms) — for the account's export and deletion (see
// watch.go). The mode itself lives on the watched side (postWatch, groupWatch).
func (k keys) userWatches(uid string) string { return k.user(uid) + ":watches" }

// readMarks is a hash post id → the post's comment ordinal (cord) when uid last marked it read,
// bounded to Options.ReadMarks entries (see readstate.go). It has an aggregate of its own,
// {rd:<user>}, for the reason the inbox has: marking a thread read must not make every cached
// response that shows the user stale.
func (k keys) readMarks(uid string) string { return k.prefix + "{rd:" + uid + "}:marks" }

// commentIdem is a string holding the comment number an idempotency key created (expires).
func (k keys) commentIdem(pid, digest string) string { return k.inThread(pid, "idem:", digest) }

// A user's notification inbox is its own aggregate, {n:<user>}, apart from the user's {u:<user>}:
// the user's revision is read by every response that shows the user (as an author, a follower…),
// and a notification must not make those stale. The ids in these keys are the notifications'
// cause ids ("c:17:4", see notifications.go), not global ids.

// inbox is a sorted set of the ids of uid's notifications scored by creation time (ms), trimmed to
// the newest NotificationCap.
func (k keys) inbox(uid string) string { return k.prefix + "{n:" + uid + "}:inbox" }

// legacyInboxUnread is the sorted set in which layout 6 kept the ids of uid's unread notifications,
// scored by creation time (ms). Since layout 7 a notification's record says whether it is unread,
// and inboxNotes's field "#u" counts the unread ones; the migration from layout 6 folds this set
// into them and deletes it (layout_unread.go).
func (k keys) legacyInboxUnread(uid string) string { return k.prefix + "{n:" + uid + "}:unread" }

// inboxNotes is a hash notification id → the notification's record, packed (noticeRecord.pack;
// layout 4 wrote JSON, which is still read), for every member of inbox(uid), and the field "#u":
// the number of unread notifications (no notification id starts with "#"; see notifications.go).
func (k keys) inboxNotes(uid string) string { return k.prefix + "{n:" + uid + "}:notes" }

// inboxUnannounced is a set of the ids of uid's notifications added but not yet announced on the
// live channel (notify.lua adds them, notify_announce.lua takes each out as it announces it).
func (k keys) inboxUnannounced(uid string) string { return k.prefix + "{n:" + uid + "}:unannounced" }

// chanNotifications is the live-event channel of uid's new notifications (notificationAdded).
func (k keys) chanNotifications(uid string) string {
	return k.prefix + "{n:" + uid + "}:ev:notifications"
}

// chanSessions is the channel on which the ends of a user's sessions are announced, in the user's
// slot so that sessions_end.lua publishes it where it ends them.
func (k keys) chanSessions(uid string) string { return k.user(uid) + ":ev:sessions" }

// rev is a string counter, the revision of the aggregate with hash tag tag ("{p:42}"): every
// write to the aggregate raises it in the same script (see revisions.go).
func (k keys) rev(tag string) string { return k.prefix + tag + ":rev" }

// revOf is the revision counter of the aggregate a key belongs to; a key of viewer-only state
// (ownRevision) has its own counter beside it instead, so that a change of it leaves the
// aggregate's shared cached answers standing.
func (k keys) revOf(key string) string {
	if ownRevision(key) {
		return key + ":rev"
	}
	return k.rev(tagOf(key))
}

// ownRevision reports whether key holds state that only a viewer field reads, and so has a
// revision counter of its own, <key>:rev, in its aggregate's slot: the watch modes of a post or a
// group (postWatch, groupWatch), which only viewerWatch shows. A response that shows viewerWatch
// is kept per viewer and records that counter (besides the aggregate's, for the rest it reads);
// the watch script raises it, and no other revision, so that one user's watch does not evict the
// thread or the group page that everyone else shares.
func ownRevision(key string) bool { return strings.HasSuffix(key, "}:watch") }

// Live events travel on pub/sub channels named like keys, in the hash slot of the aggregate they
// are about, each with its log beside it (see events.go).

// chanPostChanged is the channel of the changes of a post (votes, score, comments, groups,
// deletion).
func (k keys) chanPostChanged(pid string) string { return k.post(pid) + ":ev:changed" }

// chanComments is the channel of the comments added to a post's thread.
func (k keys) chanComments(pid string) string { return k.post(pid) + ":ev:comments" }

// chanPublished is the channel of new posts: all of them (group "") or one group's.
func (k keys) chanPublished(group string) string {
	if group == "" {
		return k.prefix + "{r:all}:ev:posts"
	}
	return k.prefix + "{g:" + group + "}:ev:posts"
}

// logOf is a stream, the log of a channel's events (see publish.lua), in the channel's hash slot.
func (k keys) logOf(channel string) string { return channel + ":log" }

// Channels names the live-event channels for the subscribers of package live, which pass them
// back to LogHead and ReplayLog; the store builds them, as it builds every key.
type Channels struct{ k keys }

// Channels returns the names of the store's live-event channels.
func (s *Store) Channels() Channels { return Channels{s.k} }

// PostChanged is the channel of the changes of the post with key pid ("17").
func (c Channels) PostChanged(pid string) string { return c.k.chanPostChanged(pid) }

// Comments is the channel of the comments added to the thread of the post with key pid.
func (c Channels) Comments(pid string) string { return c.k.chanComments(pid) }

// Published is the channel of new posts: all of them when group is "", else those of the group
// with that (normalized) name.
func (c Channels) Published(group string) string { return c.k.chanPublished(group) }

// Notifications is the channel of a user's new notifications.
func (c Channels) Notifications(uid string) string { return c.k.chanNotifications(uid) }

// Sessions is the channel on which the ends of a user's sessions are announced (see
// SessionsEnded).
func (c Channels) Sessions(uid string) string { return c.k.chanSessions(uid) }

// checkPrefix rejects a key prefix with braces: Redis Cluster hashes only the first {...} of a
// key, so braces in the prefix would override the aggregates' hash tags.
func checkPrefix(p string) error {
	if strings.ContainsAny(p, "{}") {
		return invalidf("the key prefix %q must not contain { or }: the keys' hash tags choose their cluster slots", p)
	}
	if strings.ContainsAny(p, `*?[]\`) {
		return invalidf("the key prefix %q must not contain * ? [ ] or \\: rebuild finds keys by a SCAN pattern that starts with it", p)
	}
	return nil
}

// Community keys (moderation, groups as aggregates, membership, reports, the mod log, blocks,
// saves, sessions per user). A group's keys share its ranking's tag {g:<group>}; the site-wide
// moderation state has tags of its own: {site} for site bans, {modlog} for the moderation log,
// {reports} for reports.

// groupInfo is a hash: created (ms), creator (user key; absent for a group made by a post),
// description (absent when none), ver (raised by every change).
func (k keys) groupInfo(group string) string { return k.prefix + "{g:" + group + "}:info" }

// groupMods is a sorted set of the group's moderators (user keys) scored by when each became one
// (ms). It is the authoritative record of who moderates the group.
func (k keys) groupMods(group string) string { return k.prefix + "{g:" + group + "}:mods" }

// groupMembers is a sorted set of the group's members (user keys) scored by join time (ms),
// mirrored from their userGroups sets; its size is the member count.
func (k keys) groupMembers(group string) string { return k.prefix + "{g:" + group + "}:members" }

// groupMembersVer is a hash member user key → the userGroupsSeq version groupMembers last applied.
func (k keys) groupMembersVer(group string) string {
	return k.prefix + "{g:" + group + "}:members:ver"
}

// groupPins is a sorted set of the ids of the posts pinned in the group (at most MaxPins), scored
// by when each was pinned (ms). It is the authoritative record of pins.
func (k keys) groupPins(group string) string { return k.prefix + "{g:" + group + "}:pins" }

// groupBans is a sorted set of the users banned from the group (user keys) scored by when the
// ban ends (ms; 2^53 when permanent, see permanentScore; when it was lifted, for a lifted ban):
// members scored at or before now are over (per-member expiry, read exactly at read time). It is
// the authoritative record of the group's bans.
func (k keys) groupBans(group string) string { return k.prefix + "{g:" + group + "}:bans" }

// groupBanInfo is a hash user key → the ban as compact JSON (see banRecord), for every member of
// groupBans(group).
func (k keys) groupBanInfo(group string) string { return k.prefix + "{g:" + group + "}:bans:info" }

// siteBans and siteBanInfo are groupBans and groupBanInfo for site bans.
func (k keys) siteBans() string    { return k.prefix + "{site}:bans" }
func (k keys) siteBanInfo() string { return k.prefix + "{site}:bans:info" }

// userBans is a sorted set of the scopes the user is banned in — "*" for the site, else a group
// name — scored by when each ban ends (ms; 2^53 when permanent), mirrored from groupBans and
// siteBans so that a user's writes check their bans on their own slot, with their rate limit.
func (k keys) userBans(uid string) string { return k.user(uid) + ":bans" }

// userBansVer is a hash scope → "<version> <nonce>" of the ban record userBans last applied.
func (k keys) userBansVer(uid string) string { return k.user(uid) + ":bans:ver" }

// userGroups is a sorted set of the names of the groups the user joined, scored by join time (ms).
// It is the authoritative record of membership.
func (k keys) userGroups(uid string) string { return k.user(uid) + ":groups" }

// userGroupsSeq is a string counter raised by every change to userGroups(uid); it versions the
// group-side member records derived from it.
func (k keys) userGroupsSeq(uid string) string { return k.user(uid) + ":groups:seq" }

// saved is a sorted set of the ids of the posts the user saved, scored by when (ms).
func (k keys) saved(uid string) string { return k.user(uid) + ":saved" }

// blocks is a sorted set of the users (user keys) uid blocks, scored by when (ms).
func (k keys) blocks(uid string) string { return k.user(uid) + ":blocks" }

// userReports is a sorted set of the ids of the user's open reports scored by when each stops
// counting against the user's limit (ms): per-member expiry, so those past now do not count.
func (k keys) userReports(uid string) string { return k.user(uid) + ":reports" }

// modLogEntries is a hash action id → the action as compact JSON (see modRecord).
func (k keys) modLogEntries() string { return k.prefix + "{modlog}:entries" }

// modLog is a sorted set of action ids scored by when each was taken (ms): every action
// (group "") or one group's.
func (k keys) modLog(group string) string {
	if group == "" {
		return k.prefix + "{modlog}:all"
	}
	return k.prefix + "{modlog}:g:" + group
}

// reportSeq is a string counter that allocates report ids.
func (k keys) reportSeq() string { return k.prefix + "{reports}:seq" }

// reportEntries is a hash report id → the report as compact JSON (see reportRecord).
func (k keys) reportEntries() string { return k.prefix + "{reports}:entries" }

// reportBy is a hash "<reporter>\x00<target id>" → the id of the reporter's open report of that
// target, so that reporting again returns it.
func (k keys) reportBy() string { return k.prefix + "{reports}:by" }

// reportList is a sorted set of report ids scored by creation time (ms): those of one group, or
// every report when group is "" (reports of posts in no group are only there, for the admins);
// all of them (open false) or only the open ones (open true).
func (k keys) reportList(group string, open bool) string {
	scope := "all"
	if group != "" {
		scope = "g:" + group
	}
	if open {
		return k.prefix + "{reports}:" + scope + ":open"
	}
	return k.prefix + "{reports}:" + scope + ":any"
}

// postModOutbox is a moderation outbox (see store/moderation.go), a hash action key → the action
// as compact JSON (see modRecord): the moderation actions on the post and its comments that
// their scripts recorded and that are not yet known to be in the moderation log.
func (k keys) postModOutbox(pid string) string { return k.post(pid) + ":modlog" }

// groupModOutbox is postModOutbox for the actions recorded on a group's slot: pins, changes of
// its description and moderators, bans from it.
func (k keys) groupModOutbox(group string) string { return k.prefix + "{g:" + group + "}:modlog" }

// siteModOutbox is postModOutbox for the actions recorded on {site}: site bans.
func (k keys) siteModOutbox() string { return k.prefix + "{site}:modlog" }

// reportModOutbox is postModOutbox for the actions recorded on {reports}: resolved reports.
func (k keys) reportModOutbox() string { return k.prefix + "{reports}:modlog" }

// userReportTargets is a hash of the user's open reports as the reporter's side records them,
// for every member of userReports(uid): "t:<target global id>" → the report as JSON (see
// reportRecord, with its id), "i:<report id>" → the target's global id. report_reserve.lua
// writes an entry before the report itself is written in {reports}, so that a report cut off
// between the two steps can be finished from it (see reports.go).
func (k keys) userReportTargets(uid string) string { return k.user(uid) + ":reports:targets" }

// userReportsFiled is a sorted set of the ids of every report the user filed, open or resolved,
// scored by when each was made (ms): the reporter's history, which the export reads (the report
// itself, with its status, is in reportEntries). report_reserve.lua adds an id with the
// reservation; an id whose report was never written (its attempt lost the id, or the target
// held the user's open report already) may stay, and readers skip it. Layout 6.
func (k keys) userReportsFiled(uid string) string { return k.user(uid) + ":reports:filed" }

// reportCounts is a hash target global id (a post or a comment) → how many open reports it has,
// changed only by the scripts that write and resolve reports.
func (k keys) reportCounts() string { return k.prefix + "{reports}:counts" }

// reportGroups is a sorted set of the names of the groups that hold reports, scored by the time of
// each one's latest report (ms), so that a moderator's reports can be merged from their groups'
// lists.
func (k keys) reportGroups() string { return k.prefix + "{reports}:groups" }

// filters is a hash of the site filters (sitefilters.go): v (version, raised by every change),
// a (action: REFUSE or REPLACE), w and d (the words and the domains, each a JSON array), by and at
// (who changed them last, when: Unix ms).
func (k keys) filters() string { return k.prefix + "{filters}" }

// userNewWrites is a sorted set of a new account's recent posts or comments (what: "posts" or
// "comments"), scored by time (ms), for the new-account limits (newaccounts.go).
func (k keys) userNewWrites(uid, what string) string { return k.user(uid) + ":new:" + what }

// modLogNotices is a hash action key → the global id of the notification that told whom the
// action concerns of it (modnotices.go).
func (k keys) modLogNotices() string { return k.prefix + "{modlog}:notices" }

// userDismissed is a sorted set of the user's reports that moderators dismissed, report id → when
// (ms), for the limit on reporting (reportdismissals.go).
func (k keys) userDismissed(uid string) string { return k.user(uid) + ":dismissed" }

// Private messages (see messages.go). A conversation between two users is its own aggregate,
// {m:<a>:<b>} with a < b, holding its messages; each user's mailbox — their conversation lists
// and unread messages — is {mb:<user>}, apart from {u:<user>} for the reason the inbox is.

// conv is a hash of a conversation's state: at (last activity, ms) and, for each participant u,
// a:<u> ("1": u accepts the conversation), q:<u> ("1": a request to u is pending), d:<u> (until
// when, ms, u's decline refuses the other's requests), x:<u> (the last message id of the request
// u declined: its messages can no longer be edited; absent for a decline made before it was
// kept) and r:<u> (u has read it up to: a read position).
func (k keys) conv(a, b string) string { return k.prefix + "{m:" + a + ":" + b + "}" }

// convMsgs is a sorted set of a conversation's message ids scored by creation time (ms).
func (k keys) convMsgs(a, b string) string { return k.conv(a, b) + ":msgs" }

// convMsg is a hash, one message: f (sender), b (body; absent once deleted), t (created, ms),
// e (edited, ms), d ("1" on a tombstone).
func (k keys) convMsg(a, b, id string) string { return k.conv(a, b) + ":m:" + id }

// convLast is a hash, a copy of the conversation's last message (convMsg's fields and id), so
// that a list of conversations reads each one's last message without a round trip of its own.
func (k keys) convLast(a, b string) string { return k.conv(a, b) + ":last" }

// convIdem is a string holding the id of the message a sender's idempotency key sent (expires).
func (k keys) convIdem(a, b, digest string) string { return k.conv(a, b) + ":idem:" + digest }

// mailbox holds the keys of a user's mailbox, all derived from the conversations (see
// messages.go) and rebuilt from them by the repair of a conversation.
type mailbox struct {
	convs   string // sorted set: the other users of the accepted conversations, by last activity (ms)
	reqs    string // sorted set: the users whose message requests are pending, by last activity (ms)
	unread  string // sorted set, all scores 0: "<other>:<message id>" of the unread messages of accepted conversations
	runread string // sorted set, all scores 0: the same for pending requests
	state   string // hash: other user → "<a> <d> <r>", u's state in the conversation as conv keeps it
	ver     string // hash: other user → the version of what the mailbox holds of the conversation (mailbox.lua)
	// gone is a string that marks the mailbox of a deleted account, which the steps of
	// conversations' writes in flight (or on a send lease granted before the deletion) then leave
	// alone: its keys are dropped and must stay so. Kept for ever, as the account's name is.
	gone string
}

func (k keys) mailbox(uid string) mailbox {
	tag := k.prefix + "{mb:" + uid + "}"
	return mailbox{convs: tag + ":convs", reqs: tag + ":reqs", unread: tag + ":unread", runread: tag + ":runread", state: tag + ":state",
		ver: tag + ":ver", gone: tag + ":gone"}
}

// mailboxKeysBut lists the keys of uid's mailbox but its conversations (convs), which an
// account's deletion works through before they go.
func (k keys) mailboxKeysBut(uid string) []string {
	mb := k.mailbox(uid)
	return []string{mb.reqs, mb.unread, mb.runread, mb.state, mb.ver}
}

// msgRate is a sorted set of the user's recent messages scored by time (ms), for the limit on
// messages (MessageOptions.PerWindow).
func (k keys) msgRate(uid string) string { return k.user(uid) + ":msgrate" }

// msgLeases is a sorted set of the users with whom uid's send lease may hold, scored by until when
// (Unix ms), noted by the checks that may grant one (lease_note.lua), which the ends of uid's
// leases walk (message_leases.go). It expires after its last lease.
func (k keys) msgLeases(uid string) string { return k.user(uid) + ":mleases" }

// chanMessages is the live-event channel of the messages sent to and by uid (messageAdded).
func (k keys) chanMessages(uid string) string { return k.prefix + "{mb:" + uid + "}:ev:messages" }

// Messages is the channel of the messages sent to and by a user.
func (c Channels) Messages(uid string) string { return c.k.chanMessages(uid) }
