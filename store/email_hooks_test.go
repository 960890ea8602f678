package store

// Hooks for the password-reset tests of package store_test.

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
