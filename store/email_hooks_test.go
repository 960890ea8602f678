package store

import "context"

// Hooks for the email tests of package store_test.

// HoldPasswordHashingForTest takes every slot of the argon2id semaphore, so that a call that
// hashes or checks a password waits there until release.
func (s *Store) HoldPasswordHashingForTest() (release func()) {
	for range cap(s.hashing) {
		s.hashing <- struct{}{}
	}
	return func() {
		for range cap(s.hashing) {
			<-s.hashing
		}
	}
}

// ResetTokenKeyForTest returns the key that holds the reset token's digest.
func (s *Store) ResetTokenKeyForTest(token string) string {
	uid, dig, _ := parseToken(token)
	return s.k.userToken(uid, "reset", dig)
}

// SetEmailInHalvesForTest runs SetEmail's writes of addr for uid up to the address written into
// uid's hash (the claim, email_set) and returns the rest (the release of the address replaced,
// the claim's confirmation, the mail) to be run later: a call cut in two, for interleavings.
func (s *Store) SetEmailInHalvesForTest(ctx context.Context, uid UserKey, addr string) (rest func() error, err error) {
	stored, key, err := normalEmail(addr)
	if err != nil {
		return nil, err
	}
	if err := s.claimEmail(ctx, string(uid), key); err != nil {
		return nil, err
	}
	mj, old, err := s.setAddress(ctx, string(uid), string(uid), stored, key)
	if err != nil {
		return nil, err
	}
	return func() error { return s.settleAddress(ctx, string(uid), key, old, mj) }, nil
}
