package store

import (
	"context"
	"strconv"
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

// PublishManyForTest publishes on each channel, in one pipeline, its index plus first.
func (s *Store) PublishManyForTest(ctx context.Context, channels []string, first int) error {
	pipe := s.rdb.Pipeline()
	for i, ch := range channels {
		s.queuePublish(ctx, pipe, ch, strconv.Itoa(first+i))
	}
	_, err := pipe.Exec(ctx)
	return err
}
