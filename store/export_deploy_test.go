package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
)

// Key names for the deployment tests of package store_test (cluster, failover, rebuild).

// RankingKeysForTest returns the HOT, NEW and TOP sorted sets and the version hash of the site's
// rankings (group "") or a group's.
func (s *Store) RankingKeysForTest(group string) (hot, new, top, ver string) {
	r := s.k.ranking(group)
	return r.hot, r.new, r.top, r.ver
}

// UserPostsKeysForTest returns the user's post list and its version hash.
func (s *Store) UserPostsKeysForTest(uid string) (posts, ver string) {
	return s.k.userPosts(uid), s.k.userPostsVer(uid)
}

// PostKeyForTest returns the key of a post's hash.
func (s *Store) PostKeyForTest(pid string) string { return s.k.post(pid) }

// PostSeqKeyForTest returns the key of the post id counter.
func (s *Store) PostSeqKeyForTest() string { return s.k.postSeq() }

// PostVotesKeyForTest returns the key of a post's votes hash.
func (s *Store) PostVotesKeyForTest(pid string) string { return s.k.postVotes(pid) }

// CommentVoteForTest returns the bucket and the field of voter's vote on comment num (stored form,
// as CommentKey returns it) of post pid.
func (s *Store) CommentVoteForTest(pid, num, voter string) (key, field string) {
	return s.k.commentVote(pid, num, voter)
}

// ThreadKeyForTest returns the key of comment num (as in ids, "4"; "0" for the post) of post pid,
// with suffix appended (":rt", ":rs", ":votes" (layout 5's votes) or "").
func (s *Store) ThreadKeyForTest(pid, num, suffix string) string {
	if suffix == ":votes" {
		return s.k.legacyCommentVotes(pid, padNum(num))
	}
	return s.k.comment(pid, num) + suffix
}

// ThreadIDsKeyForTest returns the key of the set of a thread's comment numbers.
func (s *Store) ThreadIDsKeyForTest(pid string) string { return s.k.threadIDs(pid) }

// ThreadNumForTest returns a comment number (as in ids) as stored in the reply indexes.
func (s *Store) ThreadNumForTest(num string) string { return padNum(num) }

// PHCForTest returns a compact password hash in the PHC string form layout 2 stored.
func PHCForTest(compact string) string {
	m, t, p, salt, key, _ := decodeHash(compact)
	return fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s", m, t, p,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

// PaddedThreadKeyForTest is ThreadKeyForTest as layouts before 6 named the key: by the number in
// stored form ("{p:17}:c:000000000004:rt").
func (s *Store) PaddedThreadKeyForTest(pid, num, suffix string) string {
	return s.k.inThread(pid, padNum(num), suffix)
}

// PadThreadKeysForTest renames the keys of every comment of post pid's thread (its hash and its
// reply orders) to their names of layouts before 6, by the padded number, as a keyspace of layout
// 5 holds them, and returns how many it renamed.
func (s *Store) PadThreadKeysForTest(ctx context.Context, pid string) (int, error) {
	nums, err := s.threadNums(ctx, pid)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, num := range nums {
		for _, suffix := range commentKeySuffixes {
			short, padded := s.k.inThread(pid, shortNum(num), suffix), s.k.inThread(pid, num, suffix)
			ok, err := s.rdb.RenameNX(ctx, short, padded).Result()
			if err != nil && !isNil(err) && !strings.Contains(err.Error(), "no such key") {
				return n, err
			}
			if ok {
				n++
			}
		}
		// The body's field too (layouts up to 6 named it by the stored form).
		bodies := s.k.commentBodies(pid)
		if body, err := s.rdb.HGet(ctx, bodies, shortNum(num)).Result(); err == nil {
			if err := s.rdb.HSet(ctx, bodies, num, body).Err(); err != nil {
				return n, err
			}
			if err := s.rdb.HDel(ctx, bodies, shortNum(num)).Err(); err != nil {
				return n, err
			}
			n++
		} else if !isNil(err) {
			return n, err
		}
	}
	return n, nil
}

// ShortenCommentKeysForTest runs the comment keys' step of the migration from layout 5 and
// returns how many keys it renamed.
func (s *Store) ShortenCommentKeysForTest(ctx context.Context) (int, error) {
	return s.shortenCommentKeys(ctx)
}
