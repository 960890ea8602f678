package httpapi

import (
	"net/http"
)

// cors lets single-page apps served from the allowed origins (Live.AllowedOrigins, the one
// allow-list that also governs WebSockets) call /query over HTTP: a preflight from an allowed
// origin is answered 204 with the methods and headers such apps send and a 10-minute cache, and
// every response to one carries Access-Control-Allow-Origin. Credentials (cookies) are not
// allowed: agora authenticates with a bearer token, which the app sends itself. A preflight from
// an origin not on the list is refused with 403 and no CORS header, so the browser blocks the call.
// corsAllowHeaders are the request headers /query and /export read, which a browser sends on
// another origin only when the preflight allows them: the token, the body's and the answer's
// media types, the cursor an event stream resumes from, and a trace's context (tracing.go).
const corsAllowHeaders = "Authorization, Content-Type, Accept, Last-Event-ID, traceparent, tracestate, baggage"

func cors(cfg Config, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := header(r, "Origin")
		if origin == "" || header(r, "Upgrade") != "" { // WebSockets check their origin themselves
			next.ServeHTTP(w, r)
			return
		}
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		h := w.Header()
		h.Add("Vary", "Origin")
		if err := checkOrigin(r, cfg.Live.AllowedOrigins); err != nil {
			if preflight {
				writeError(w, http.StatusForbidden, "the origin "+origin+" may not call this API", CodeForbidden)
				return
			}
			next.ServeHTTP(w, r) // answered without CORS headers: the browser keeps it from the page
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", "Retry-After, WWW-Authenticate, "+CacheHeader)
		if preflight {
			h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}
