package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/agora/agora/store"
)

// Persisted queries. A request may name its document by hash instead of sending it
// (extensions.persistedQuery: {version: 1, sha256Hash}), over GET or POST — Apollo's automatic
// persisted queries, as Apollo Client's and urql's persisted-query links send them:
//
//   - hash only: the document registered under the hash runs; when none is, the answer is
//     PERSISTED_QUERY_NOT_FOUND and the client sends the document with its hash, once;
//   - hash and document: the hash is checked against the document (BAD_USER_INPUT if it is not
//     its SHA-256), the document runs, and, if it parses, it is registered in Redis for every
//     replica (store.PersistQuery, which bounds what it keeps).
//
// With trusted documents (-trusted-documents, a manifest of the app's operations) only the
// manifest's documents run: by hash, or sent in full when their hash is in it; anything else is
// refused with TRUSTED_DOCUMENTS_ONLY, and nothing is registered.
//
// The document found is put into the request, so everything after this (the GET-is-for-queries
// rule, the response cache, the limits) sees an ordinary request. Subscriptions over a
// WebSocket send documents in full; trustedOnly holds every transport to the manifest.

// Codes of persisted queries.
const (
	CodePersistedQueryNotFound = "PERSISTED_QUERY_NOT_FOUND"
	CodeTrustedDocumentsOnly   = "TRUSTED_DOCUMENTS_ONLY"
)

// persistedRequest is the part of a GraphQL request that persisted queries look at.
type persistedRequest struct {
	Query         string `json:"query"`
	OperationName string `json:"operationName"`
	Extensions    struct {
		PersistedQuery *struct {
			Version    int    `json:"version"`
			SHA256Hash string `json:"sha256Hash"`
		} `json:"persistedQuery"`
	} `json:"extensions"`
}

// TrustedDocuments is a manifest of the documents a deployment runs, by their SHA-256.
type TrustedDocuments map[string]string

// LoadTrustedDocuments reads a manifest: Apollo's persisted-query manifest
// ({"format": "apollo-persisted-query-manifest", "operations": [{"id", "body"}, ...]}) or a JSON
// object of hash → document (GraphQL Code Generator's and Relay's persisted documents). Every
// hash must be the SHA-256 of its document.
func LoadTrustedDocuments(path string) (TrustedDocuments, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read trusted documents: %w", err)
	}
	var apollo struct {
		Format     string `json:"format"`
		Operations []struct {
			ID   string `json:"id"`
			Body string `json:"body"`
		} `json:"operations"`
	}
	docs := TrustedDocuments{}
	if err := json.Unmarshal(raw, &apollo); err == nil && apollo.Format != "" {
		if apollo.Format != "apollo-persisted-query-manifest" {
			return nil, fmt.Errorf("trusted documents %s: unknown format %q", path, apollo.Format)
		}
		for _, op := range apollo.Operations {
			docs[op.ID] = op.Body
		}
	} else if err := json.Unmarshal(raw, (*map[string]string)(&docs)); err != nil {
		return nil, fmt.Errorf("trusted documents %s: want Apollo's manifest or an object of hash → document: %w", path, err)
	}
	for hash, doc := range docs {
		if store.QueryHash(doc) != hash {
			return nil, fmt.Errorf("trusted documents %s: %s is not the SHA-256 of its document", path, hash)
		}
	}
	return docs, nil
}

// persisted resolves persisted queries (see above) before next.
func persisted(cfg Config, next http.Handler) http.Handler {
	st, trusted, log := cfg.Store, cfg.TrustedDocuments, cfg.Log
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		var req persistedRequest
		switch r.Method {
		case http.MethodPost:
			body, _ = requestBody(r) // capBody has read it into memory
			if !bytes.Contains(body, []byte(`"persistedQuery"`)) {
				next.ServeHTTP(w, r) // most requests: not decoded here (the cache and the transport do)
				return
			}
			if json.Unmarshal(body, &req) != nil {
				next.ServeHTTP(w, r) // the transport answers a malformed request
				return
			}
		case http.MethodGet:
			q := r.URL.Query()
			req.Query, req.OperationName = q.Get("query"), q.Get("operationName")
			if ext := q.Get("extensions"); ext != "" && json.Unmarshal([]byte(ext), &req.Extensions) != nil {
				writeError(w, http.StatusBadRequest, "extensions is not a JSON object", CodeBadUserInput)
				return
			}
		default:
			next.ServeHTTP(w, r)
			return
		}
		pq := req.Extensions.PersistedQuery
		if pq == nil {
			next.ServeHTTP(w, r) // trustedOnly checks a document sent in full
			return
		}
		if pq.Version != 1 {
			writeError(w, http.StatusBadRequest, "persistedQuery.version must be 1", CodeBadUserInput)
			return
		}
		ctx := r.Context()
		hash := pq.SHA256Hash
		switch {
		case trusted != nil && req.Query != "":
			if store.QueryHash(req.Query) != hash {
				writeError(w, http.StatusBadRequest, "persistedQuery.sha256Hash is not the SHA-256 of the query", CodeBadUserInput)
				return
			}
			// trustedOnly checks it.
		case trusted != nil:
			req.Query = trusted[hash]
			if req.Query == "" {
				writeError(w, notFoundStatus(w), "PersistedQueryNotFound", CodePersistedQueryNotFound)
				return
			}
		case req.Query != "":
			if store.QueryHash(req.Query) != hash {
				writeError(w, http.StatusBadRequest, "persistedQuery.sha256Hash is not the SHA-256 of the query", CodeBadUserInput)
				return
			}
			// Only a document that parses is kept; either way this request runs it (and the
			// executor answers one that does not parse).
			if _, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: req.Query}, cfg.Limits.MaxTokens); err == nil {
				if _, err := st.PersistQuery(ctx, hash, req.Query); err != nil {
					writeStoreError(w, log, err)
					return
				}
			}
		default:
			doc, err := st.PersistedQuery(ctx, hash)
			if err != nil {
				writeStoreError(w, log, err)
				return
			}
			if doc == "" {
				writeError(w, notFoundStatus(w), "PersistedQueryNotFound", CodePersistedQueryNotFound)
				return
			}
			req.Query = doc
			r = r.WithContext(context.WithValue(ctx, knownDocumentKey{}, true))
		}
		// Put the document into the request.
		if r.Method == http.MethodGet {
			if msg, refused := refusedOverGET(req.Query, req.OperationName, cfg.Limits.MaxTokens); refused {
				w.Header().Set("Allow", "POST")
				writeError(w, http.StatusMethodNotAllowed, msg, CodeMethodNotAllowed)
				return
			}
			q := r.URL.Query()
			q.Set("query", req.Query)
			r.URL.RawQuery = q.Encode()
		} else {
			var fields map[string]json.RawMessage
			if json.Unmarshal(body, &fields) != nil {
				next.ServeHTTP(w, r)
				return
			}
			fields["query"], _ = json.Marshal(req.Query)
			body, _ = json.Marshal(fields)
			r.Body = newBufferedBody(body)
			r.ContentLength = int64(len(body))
		}
		next.ServeHTTP(w, r)
	})
}

// knownDocumentKey marks the context of a request whose document was found by its hash among
// the persisted queries: a document registered before, which the metrics may count by name.
type knownDocumentKey struct{}

// knownDocument reports whether the document of ctx's request was found by its hash.
func knownDocument(ctx context.Context) bool {
	known, _ := ctx.Value(knownDocumentKey{}).(bool)
	return known
}

// notFoundStatus is the status of PERSISTED_QUERY_NOT_FOUND: 200 in application/json, as
// Apollo's and urql's links expect, and 400 in application/graphql-response+json, where a request
// that does not run is a client error.
func notFoundStatus(w http.ResponseWriter) int {
	if w.Header().Get("Content-Type") == mediaGraphQLResponse {
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// writeStoreError answers a store error met outside the executor.
func writeStoreError(w http.ResponseWriter, log *slog.Logger, err error) {
	var se *store.Error
	if !errors.As(err, &se) {
		log.Error("persisted query", "err", err)
		writeError(w, http.StatusInternalServerError, "internal server error", CodeInternal)
		return
	}
	status := http.StatusBadRequest
	switch se.Kind {
	case store.KindRateLimited:
		status = http.StatusTooManyRequests
	case store.KindUnavailable:
		status = http.StatusServiceUnavailable
	}
	writeStoreErrorBody(w, status, se)
}

// trustedOnly is a gqlgen extension that refuses, on every transport, a document that is not in
// the manifest of trusted documents.
type trustedOnly struct{ docs TrustedDocuments }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = trustedOnly{}

func (trustedOnly) ExtensionName() string                   { return "AgoraTrustedDocuments" }
func (trustedOnly) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters refuses a document whose SHA-256 is not in the manifest.
func (t trustedOnly) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	if t.docs[store.QueryHash(p.Query)] != "" {
		return nil
	}
	return limitError(CodeTrustedDocumentsOnly, "this server runs only its trusted documents: send one of them, by hash")
}
