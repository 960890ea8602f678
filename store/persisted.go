package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Persisted queries (Apollo's automatic persisted queries): a client sends the SHA-256 of a
// document instead of the document; the server answers from the document registered under it,
// or asks for the document once. The documents are kept in Redis, so every replica shares them,
// each with a TTL that every use restarts: documents nobody sends any more go by themselves.

// PersistedQueryTTL is how long a registered document is kept after its last use.
const PersistedQueryTTL = 7 * 24 * time.Hour

// persistedQueryLimit bounds the documents one client address may register per minute, so that
// nobody fills Redis with documents (off with a negative WriteLimit, like the other limits).
var persistedQueryLimit = limit{"persisted-query registrations from this address", 100, time.Minute}

// QueryHash returns the hex SHA-256 of a document: the hash a persisted query is known by.
func QueryHash(query string) string {
	sum := sha256.Sum256([]byte(query))
	return hex.EncodeToString(sum[:])
}

// checkQueryHash checks that hash is 64 lower-case hex digits.
func checkQueryHash(hash string) error {
	if len(hash) != 64 {
		return invalidf("persistedQuery.sha256Hash must be 64 hexadecimal digits")
	}
	for _, c := range hash {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return invalidf("persistedQuery.sha256Hash must be 64 lower-case hexadecimal digits")
		}
	}
	return nil
}

// PersistedQuery returns the document registered under hash and keeps it another
// PersistedQueryTTL, or "" when none is.
func (s *Store) PersistedQuery(ctx context.Context, hash string) (string, error) {
	if err := checkQueryHash(hash); err != nil {
		return "", err
	}
	var q string
	err := s.Bounded(ctx, func(ctx context.Context) error {
		var err error
		q, err = s.rdb.GetEx(ctx, s.k.persistedQuery(hash), PersistedQueryTTL).Result()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read persisted query: %w", err)
	}
	return q, nil
}

// PersistQuery registers query under hash, which must be its SHA-256. A client address
// (WithClient) may register persistedQueryLimit documents a minute.
func (s *Store) PersistQuery(ctx context.Context, hash, query string) error {
	if err := checkQueryHash(hash); err != nil {
		return err
	}
	if QueryHash(query) != hash {
		return invalidf("persistedQuery.sha256Hash is not the SHA-256 of the query")
	}
	if addr := ClientFrom(ctx); addr != "" {
		if err := s.allow(ctx, s.k.addrQueries(addr), persistedQueryLimit, true); err != nil {
			return err
		}
	}
	err := s.Bounded(ctx, func(ctx context.Context) error {
		return s.rdb.Set(ctx, s.k.persistedQuery(hash), query, PersistedQueryTTL).Err()
	})
	if err != nil {
		return fmt.Errorf("register persisted query: %w", err)
	}
	return nil
}
