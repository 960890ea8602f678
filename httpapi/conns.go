package httpapi

import (
	"net"
	"sync"
	"time"
)

// LimitConnections returns a listener that keeps at most max connections open at once. A
// connection beyond that is accepted, answered 503 and closed at once, so that a flood of idle or
// slow connections can neither exhaust the process's file descriptors nor leave new clients
// without an answer.
func LimitConnections(ln net.Listener, max int) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, max)}
}

type limitListener struct {
	net.Listener
	slots chan struct{}
}

// busy is what a connection over the limit reads before it is closed.
const busy = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nRetry-After: 1\r\n" +
	"Content-Length: " + busyBodyLen + "\r\n\r\n" + busyBody

const (
	busyBody    = `{"errors":[{"message":"the server has too many connections open; retry","extensions":{"code":"UNAVAILABLE"}}]}`
	busyBodyLen = "110" // len(busyBody); TestLimitConnections checks it
)

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			go refuse(c)
		}
	}
}

// refuse answers a connection over the limit and closes it, giving a slow reader a second.
func refuse(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write([]byte(busy))
	_ = c.Close()
}

// limitConn frees its slot when it closes, once.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
