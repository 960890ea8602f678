package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agora/agora/store"
)

// exportWriteTimeout bounds each write of an export to its client: a client that stops reading
// is disconnected instead of holding the export open.
const exportWriteTimeout = time.Minute

// exportHandler serves GET /export: the export of the account of the session whose token the
// request carries ("Authorization: Bearer <token>"), as one JSON document streamed as it is read
// (store.Export). Without a token, or with one that is invalid or expired, it answers 401
// UNAUTHENTICATED; past the account's exports per day, 429 RATE_LIMITED with Retry-After. An
// error once the document has begun cuts the connection: the client sees a truncated document,
// which lacks the closing "complete": true, never one that looks whole.
func exportHandler(cfg Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "the export is read with GET", CodeMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "private, no-store")
		w.Header().Add("Vary", "Authorization")
		token, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer`)
			writeError(w, http.StatusUnauthorized, `sign in, and send the token as "Authorization: Bearer <token>"`, CodeUnauthenticated)
			return
		}
		ctx := r.Context()
		user, err := cfg.Store.Authenticate(ctx, token)
		if err != nil {
			writeExportError(w, r, cfg, err)
			return
		}
		if r.Method == http.MethodHead {
			return // HEAD tells a client whether its token would do, without spending an export
		}
		ew := &exportWriter{w: w, rc: http.NewResponseController(w), user: user, now: time.Now()}
		if err := cfg.Store.Export(ctx, user, token, ew); err != nil {
			if !ew.began {
				writeExportError(w, r, cfg, err)
				return
			}
			logFailure(ctx, cfg.Log, "export", err)
			panic(http.ErrAbortHandler) // the document cannot be finished: end the response unfinished
		}
	})
}

// writeExportError answers an export that failed before its document began.
func writeExportError(w http.ResponseWriter, r *http.Request, cfg Config, err error) {
	var se *store.Error
	switch {
	case store.IsKind(err, store.KindUnauthenticated):
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		writeError(w, http.StatusUnauthorized, "the token is invalid or has expired: sign in again", CodeUnauthenticated)
	case errors.As(err, &se) && se.Kind == store.KindRateLimited:
		writeStoreErrorBody(w, http.StatusTooManyRequests, se)
	case errors.As(err, &se) && se.Kind == store.KindNotFound:
		writeStoreErrorBody(w, http.StatusNotFound, se)
	case errors.As(err, &se) && se.Kind == store.KindUnavailable:
		cfg.Log.WarnContext(r.Context(), "export", "err", err)
		writeStoreErrorBody(w, http.StatusServiceUnavailable, se)
	default:
		logFailure(r.Context(), cfg.Log, "export", err)
		writeError(w, http.StatusInternalServerError, "internal server error", CodeInternal)
	}
}

// exportWriter is the response of an export as store.Export writes it: the headers of the
// document go out with its first bytes, each write has exportWriteTimeout to reach the client,
// and each flush (one per page) sends what was written at once.
type exportWriter struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	user  store.UserKey
	now   time.Time
	began bool
}

func (e *exportWriter) Write(p []byte) (int, error) {
	if !e.began {
		e.began = true
		h := e.w.Header()
		h.Set("Content-Type", "application/json; charset=utf-8")
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="agora-%s-%s.json"`, e.user, e.now.UTC().Format("2006-01-02")))
		h.Set("X-Content-Type-Options", "nosniff")
	}
	_ = e.rc.SetWriteDeadline(time.Now().Add(exportWriteTimeout)) // not every writer has deadlines
	return e.w.Write(p)
}

// Flush sends what was written to the client.
func (e *exportWriter) Flush() error {
	if err := e.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}
