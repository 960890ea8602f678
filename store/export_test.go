package store

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"io/fs"

	"github.com/agora/agora/internal/rdb"
)

// Hooks for the external tests of package store_test.

// ScriptSHA returns the SHA1 by which the store sends its script name (a file of scripts/,
// without ".lua") in EVALSHA: a test's client hook tells the store's scripts apart by it.
func ScriptSHA(name string) string {
	text := must(withLibs(string(must(fs.ReadFile(scriptFS, "scripts/"+name+".lua")))))
	sum := sha1.Sum([]byte(text))
	return hex.EncodeToString(sum[:])
}

// ScriptSource returns the text of the store's script name, its libraries included, as the store
// sends it.
func ScriptSource(name string) string {
	return must(withLibs(string(must(fs.ReadFile(scriptFS, "scripts/"+name+".lua")))))
}

// OnVerify makes s call f before each argon2id verification of a password (a log-in's, a
// password change's, the decoy's for an unknown name). Set it before any log-in.
func (s *Store) OnVerify(f func()) { s.onVerify = f }

// OnChecked sets a function called with the user of each write whose first round trip's checks
// passed, before the write goes on (nil for none).
func (s *Store) OnChecked(f func(uid string)) { s.onChecked = f }

// OnTextMatch has f called with the length of each text a search matches against its query.
func (s *Store) OnTextMatch(f func(n int)) { s.onTextMatch = f }

// RecordKarma exposes recordKarma.
func (s *Store) RecordKarma(ctx context.Context, author, item string, net int, version int64) error {
	return s.recordKarma(ctx, author, item, net, version)
}

// FollowFirstStep runs only the follower's side of a follow or unfollow, as a call cut off after
// its first step would, and returns a function that runs the rest later, as a late or repeated
// delivery would.
func (s *Store) FollowFirstStep(ctx context.Context, a, b string, follow bool) (rest func() error, err error) {
	op := followRemove
	if follow {
		op = followAdd
	}
	rel, err := s.followStep(ctx, a, b, op)
	if err != nil {
		return nil, err
	}
	return func() error { return s.mirrorFollow(ctx, a, b, rel) }, nil
}

// Graph is the raw follow records of one user.
type Graph struct {
	Following, Followers, Push, Pull, Feed []string
}

// GraphOf reads the raw follow records of uid.
func (s *Store) GraphOf(ctx context.Context, uid string) (Graph, error) {
	var g Graph
	var err error
	if g.Following, err = s.rdb.ZRange(ctx, s.k.following(uid), 0, -1).Result(); err != nil {
		return g, err
	}
	if g.Followers, err = s.rdb.ZRange(ctx, s.k.followers(uid), 0, -1).Result(); err != nil {
		return g, err
	}
	if g.Push, err = s.rdb.SMembers(ctx, s.k.push(uid)).Result(); err != nil {
		return g, err
	}
	if g.Pull, err = s.rdb.ZRange(ctx, s.k.pull(uid), 0, -1).Result(); err != nil {
		return g, err
	}
	g.Feed, err = s.rdb.ZRevRange(ctx, s.k.feed(uid), 0, -1).Result()
	return g, err
}

// DropDerivedUserIndexes deletes the name index and the leaderboard, as a lost derived write
// would leave them.
func (s *Store) DropDerivedUserIndexes(ctx context.Context) error {
	if err := s.rdb.Del(ctx, s.k.userNames()).Err(); err != nil {
		return err
	}
	return s.rdb.Del(ctx, s.k.leaderboard()).Err()
}

// ApplyFollowMode runs follow_mode.lua alone, as a late delivery of it would.
func (s *Store) ApplyFollowMode(ctx context.Context, a, b string, version int64, mode string) error {
	_, err := s.run(ctx, "follow_mode", []string{s.k.following(a), s.k.pull(a), s.k.pullVer(a)},
		b, version, mode, 1, s.opts.Feed.MaxPulledAuthors)
	return err
}

// RefreshAdmins reads the operator's grants of site admin again, as RunBackground does every
// few seconds.
func (s *Store) RefreshAdmins(ctx context.Context) error { return s.refreshAdmins(ctx) }

// DropUserComments deletes user's comment list and its guard, as a loss of derived data would.
func (s *Store) DropUserComments(ctx context.Context, user string) error {
	return s.rdb.Del(ctx, s.k.userComments(user), s.k.userCommentsVer(user)).Err()
}

// MigrateNSFWPartsForTest runs the step of the migration from layout 3 again: the NSFW posts it
// re-indexed and the copies it deleted.
func (s *Store) MigrateNSFWPartsForTest(ctx context.Context) (moved, dropped int, err error) {
	if moved, err = s.splitNSFWPosts(ctx); err != nil {
		return moved, 0, err
	}
	dropped, err = s.dropSFWCopies(ctx)
	return moved, dropped, err
}

// ReplyOrdersAt is replyOrdersAt: how many replies a parent has when it starts keeping its TOP,
// BEST and CONTROVERSIAL orders.
const ReplyOrdersAt = replyOrdersAt

// MigrateReplyOrdersForTest runs the reply orders' step of the migration from layout 5 and
// returns how many threads it went through.
func (s *Store) MigrateReplyOrdersForTest(ctx context.Context) (int, error) {
	return s.migrateReplyOrders(ctx)
}

// ReplyScoreForTest is replyScore: a reply's score in its parent's order sort.
func ReplyScoreForTest(sort CommentSort, up, down int) float64 { return replyScore(sort, up, down) }

// FollowCutBeforePush runs a follow of b by a up to the record of its mode on a's side, as a call
// cut off before it had b push to a (a's pull set full) would.
func (s *Store) FollowCutBeforePush(ctx context.Context, a, b string) error {
	rel, err := s.followStep(ctx, a, b, followAdd)
	if err != nil {
		return err
	}
	m, err := s.mirrorRelation(ctx, []string{s.k.followers(b), s.k.followersVer(b), s.k.push(b)}, a, rel,
		s.opts.Feed.FanoutLimit)
	if err != nil {
		return err
	}
	_, err = s.run(ctx, "follow_mode", []string{s.k.following(a), s.k.pull(a), s.k.pullVer(a)},
		b, rel.version, m, rel.at, s.opts.Feed.MaxPulledAuthors)
	return err
}

// PullInstead makes a pull b's posts rather than be pushed to, beyond any bound of its pull set,
// as a follow made before the bound may have left it.
func (s *Store) PullInstead(ctx context.Context, a, b string) error {
	if err := s.rdb.SRem(ctx, s.k.push(b), a).Err(); err != nil {
		return err
	}
	return s.rdb.ZAdd(ctx, s.k.pull(a), rdb.Z{Score: float64(s.now().UnixMilli()), Member: b}).Err()
}

// WindowSets returns the keys of the sorted sets of the windowed TOP sort of group's rankings
// (group "" for the site's): the part that is not NSFW, then the NSFW part.
func (s *Store) WindowSets(group string, sort PostSort) []string {
	r := s.k.ranking(group)
	i := sort.window()
	return []string{r.windows[i], r.nsfw().windows[i]}
}

// OnWindowBacklog has f called with how many posts past its window a windowed TOP page read had
// to filter (see page.lua).
func (s *Store) OnWindowBacklog(f func(n int)) { s.onWindowBacklog = f }
