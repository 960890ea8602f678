package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The two WebSocket subprotocols of GraphQL, as far as their messages go; ws.go runs a
// connection and wsops.go its operations.
//
//   - graphql-transport-ws, PROTOCOL.md of github.com/enisdenjo/graphql-ws, followed to the
//     letter: a message the client may not send, or without what its type requires, closes the
//     socket with 4400; subscribe before connection_init with 4401; a second connection_init with
//     4429; subscribe with an id in use with 4409. ping and pong may come at any time. After the
//     client's complete nothing more is sent for the id, and after an error no complete follows.
//   - graphql-ws, the legacy protocol of subscriptions-transport-ws, chosen when the client asks
//     for it or names no subprotocol: connection_init, start, stop and connection_terminate from
//     the client; connection_ack, ka (keep-alive), data, error, complete and connection_error from
//     the server. Every operation ends with complete, a stopped one too. Messages it does not
//     allow close the socket with 4400, as above; a start with an id in use stops the operation
//     running under it first.

// More WebSocket close codes of graphql-transport-ws (see the constants in live.go).
const (
	CloseUnauthorized      = 4401 // an operation before connection_init
	CloseSubscriberExists  = 4409 // an operation id that is already in use
	CloseTooManyInitialise = 4429 // a second connection_init
)

// Subprotocol names.
const (
	transportWSProtocol = "graphql-transport-ws"
	legacyWSProtocol    = "graphql-ws"
)

// wsProtocol is the subprotocol of a connection.
type wsProtocol int

const (
	legacyWS    wsProtocol = iota // graphql-ws
	transportWS                   // graphql-transport-ws
)

// wsKind is what a client message asks for, whatever its subprotocol calls it.
type wsKind int

const (
	wsInit      wsKind = iota + 1 // connection_init
	wsStart                       // subscribe; start on graphql-ws
	wsStop                        // complete; stop on graphql-ws
	wsPing                        // graphql-transport-ws only
	wsPong                        // graphql-transport-ws only
	wsTerminate                   // connection_terminate, graphql-ws only
)

// kind returns what a client message of type typ asks for, or 0 when the client may not send it.
func (p wsProtocol) kind(typ string) wsKind {
	if p == transportWS {
		switch typ {
		case "connection_init":
			return wsInit
		case "subscribe":
			return wsStart
		case "complete":
			return wsStop
		case "ping":
			return wsPing
		case "pong":
			return wsPong
		}
		return 0
	}
	switch typ {
	case "connection_init":
		return wsInit
	case "start":
		return wsStart
	case "stop":
		return wsStop
	case "connection_terminate":
		return wsTerminate
	}
	return 0
}

// resultType is the type of the message that carries a result.
func (p wsProtocol) resultType() string {
	if p == transportWS {
		return "next"
	}
	return "data"
}

// keepAlive is the message the server sends every keep-alive interval: ping on
// graphql-transport-ws, which the client must answer with pong, and ka on graphql-ws.
func (p wsProtocol) keepAlive() []byte {
	if p == transportWS {
		return []byte(`{"type":"ping"}`)
	}
	return []byte(`{"type":"ka"}`)
}

// wsClose is why the server closes a socket: a close code and its reason.
type wsClose struct {
	code   int
	reason string
}

func invalid(why string) *wsClose {
	return &wsClose{code: CloseInvalidMessage, reason: truncateReason("Invalid message: " + why)}
}

// clientMsg is a message from the client.
type clientMsg struct {
	kind    wsKind
	id      string
	hasID   bool
	payload json.RawMessage
}

// parseClientMsg reads a message from the client: a JSON object with a type the protocol allows
// the client to send.
func (p wsProtocol) parseClientMsg(data []byte) (clientMsg, *wsClose) {
	var m struct {
		ID      *string         `json:"id"`
		Type    *string         `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(data, &m); err != nil || m.Type == nil {
		return clientMsg{}, invalid("a message must be a JSON object with a type")
	}
	k := p.kind(*m.Type)
	if k == 0 {
		return clientMsg{}, invalid(fmt.Sprintf("a client may not send a message of type %q", *m.Type))
	}
	msg := clientMsg{kind: k, payload: m.Payload}
	if m.ID != nil && *m.ID != "" {
		msg.id, msg.hasID = *m.ID, true
	}
	return msg, nil
}

// check checks what a message's type requires of the rest of it: connection_init a payload that
// is an object (or none), subscribe an id and a payload with a query, complete an id.
func (m clientMsg) check() *wsClose {
	switch m.kind {
	case wsInit:
		if !isObjectOrAbsent(m.payload) {
			return invalid("the payload of connection_init must be an object")
		}
	case wsStart:
		if !m.hasID {
			return invalid("subscribe needs an id")
		}
		var p struct {
			Query *string `json:"query"`
		}
		if len(m.payload) == 0 || json.Unmarshal(m.payload, &p) != nil || p.Query == nil {
			return invalid("the payload of subscribe must be an object with a query")
		}
	case wsStop:
		if !m.hasID {
			return invalid("complete needs an id")
		}
	}
	return nil
}

// initAuthorization returns the Authorization entry of a connection_init payload, which check
// has found to be an object or absent; "" when there is none.
func initAuthorization(payload json.RawMessage) string {
	var p map[string]any
	_ = json.Unmarshal(payload, &p)
	for _, k := range []string{"Authorization", "authorization"} {
		if s, _ := p[k].(string); s != "" {
			return s
		}
	}
	return ""
}

// Messages from the server.

const ackMsg = `{"type":"connection_ack"}`

// pongMsg is the answer to a ping, echoing its payload.
func pongMsg(payload json.RawMessage) []byte {
	b, _ := json.Marshal(struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload,omitempty"`
	}{"pong", payload})
	return b
}

// connectionErrorMsg is graphql-ws's connection_error.
func connectionErrorMsg(message string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "connection_error", "payload": map[string]string{"message": message}})
	return b
}

// opPrefix returns the start of a message of operation id of type typ, up to its payload:
// {"id":"<id>","type":"<typ>","payload":
func opPrefix(id, typ string) []byte {
	q, _ := json.Marshal(id)
	b := make([]byte, 0, len(q)+len(typ)+30)
	b = append(b, `{"id":`...)
	b = append(b, q...)
	b = append(b, `,"type":"`...)
	b = append(b, typ...)
	return append(b, `","payload":`...)
}

// opMsg returns a whole message of operation id of type typ, with payload when not nil.
func opMsg(id, typ string, payload []byte) []byte {
	b := opPrefix(id, typ)
	if payload == nil {
		b = append(bytes.TrimSuffix(b, []byte(`,"payload":`)), '}')
		return b
	}
	b = append(b, payload...)
	return append(b, '}')
}

// isObjectOrAbsent reports whether a payload is missing, null or a JSON object.
func isObjectOrAbsent(p json.RawMessage) bool {
	p = bytes.TrimSpace(p)
	if len(p) == 0 || string(p) == "null" {
		return true
	}
	var obj map[string]json.RawMessage
	return p[0] == '{' && json.Unmarshal(p, &obj) == nil
}

// truncateReason keeps a close reason within the 123 bytes a close frame allows.
func truncateReason(s string) string {
	if len(s) <= 123 {
		return s
	}
	return strings.ToValidUTF8(s[:120], "") + "..."
}
