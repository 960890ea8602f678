package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// Persisted queries (Apollo's automatic persisted queries): a client sends the SHA-256 of a
// document instead of the document; the server answers from the document registered under it,
// or asks for the document once. The documents are kept in Redis, so every replica shares them,
// in a store with a fixed bound: 16 shards ({pq:0} … {pq:f}, by the hash's first digit), each a
// hash of documents and a sorted set of their last use, keeping PersistedQueryCap/16 documents
// of at most MaxPersistedQueryBytes; the least recently used go first. A client address may add
// persistedQueryLimit documents a minute. So whatever clients send, the documents never hold more
// than PersistedQueryCap × MaxPersistedQueryBytes (64 MiB) of Redis.

// Bounds of the persisted queries.
const (
	PersistedQueryCap      = 4096
	MaxPersistedQueryBytes = 16 << 10
	persistedShards        = 16
)

// persistedQueryLimit bounds the documents one client address may add per minute (off with a
// negative WriteLimit, like the other limits); documents already kept do not count.
var persistedQueryLimit = limit{"persisted-query registrations from this address", 20, time.Minute}

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

// PersistedQuery returns the document registered under hash, noting its use, or "" when none
// is: one round trip of two plain commands.
func (s *Store) PersistedQuery(ctx context.Context, hash string) (string, error) {
	if err := checkQueryHash(hash); err != nil {
		return "", err
	}
	docs, used := s.k.persistedDocs(hash[0]), s.k.persistedUsed(hash[0])
	var get *rdb.StringCmd
	err := s.pipeline(ctx, []op{{key: docs, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		get = p.HGet(ctx, docs, hash)
		touch := p.ZAddXX(ctx, used, rdb.Z{Score: float64(s.now().UnixMilli()), Member: hash})
		return get, touch
	}}}, false)
	if err != nil {
		return "", fmt.Errorf("read persisted query: %w", err)
	}
	q, err := get.Result()
	if errors.Is(err, rdb.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read persisted query: %w", err)
	}
	return q, nil
}

// PersistQuery registers query under hash, which must be its SHA-256, and reports whether it is
// kept: a document over MaxPersistedQueryBytes is not, nor one from a client address (WithClient)
// that added persistedQueryLimit documents in the last minute — the request still runs it, the
// client sends it again next time.
func (s *Store) PersistQuery(ctx context.Context, hash, query string) (bool, error) {
	if err := checkQueryHash(hash); err != nil {
		return false, err
	}
	if QueryHash(query) != hash {
		return false, invalidf("persistedQuery.sha256Hash is not the SHA-256 of the query")
	}
	if len(query) > MaxPersistedQueryBytes {
		return false, nil
	}
	if known, err := s.PersistedQuery(ctx, hash); err != nil || known != "" {
		return known != "", err
	}
	if addr := ClientFrom(ctx); addr != "" {
		if err := s.allow(ctx, s.k.addrQueries(addr), persistedQueryLimit, true); IsKind(err, KindRateLimited) {
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
	if _, err := s.run(ctx, "persisted", []string{s.k.persistedDocs(hash[0]), s.k.persistedUsed(hash[0])},
		hash, query, s.now().UnixMilli(), PersistedQueryCap/persistedShards); err != nil {
		return false, fmt.Errorf("register persisted query: %w", err)
	}
	return true, nil
}
