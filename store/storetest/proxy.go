package storetest

import (
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy is a TCP proxy in front of a Redis, for tests that break the network between a client
// and Redis: it can lose replies (Lose), refuse new connections (Refuse) and stop forwarding
// while keeping every connection open (Stall), as a stopped Redis process looks to its clients.
type Proxy struct {
	ln     net.Listener
	target string

	loss    atomic.Int64 // millionths of reply chunks lost, the connection closed instead
	refuse  atomic.Bool  // new connections are closed at once
	mu      sync.Mutex
	resumed chan struct{} // nil while forwarding; closed by the end of a stall
	conns   []net.Conn
	wg      sync.WaitGroup
}

// NewProxy starts a proxy to the Redis at target, closed when the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		p.resume()
		_ = ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// Addr is the proxy's address.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Lose makes the proxy lose each chunk of replies with probability perMillion/1,000,000, closing
// the connection instead of forwarding it: the commands ran, their replies are lost.
func (p *Proxy) Lose(perMillion int64) { p.loss.Store(perMillion) }

// Refuse makes the proxy close new connections at once (on) or accept them again (off); the
// connections already open go on working, as when a network breaks for new ones.
func (p *Proxy) Refuse(on bool) { p.refuse.Store(on) }

// Stall stops forwarding, either way, until resume is called (the test's cleanup calls it too):
// the proxy still accepts connections and takes what clients send.
func (p *Proxy) Stall(t testing.TB) (resume func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resumed == nil {
		p.resumed = make(chan struct{})
	}
	t.Cleanup(p.resume)
	return p.resume
}

func (p *Proxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resumed != nil {
		close(p.resumed)
		p.resumed = nil
	}
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.refuse.Load() {
			_ = c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(up, c, false)
		go p.pipe(c, up, true)
	}
}

// pipe copies src to dst, holding every chunk while the proxy stalls and, for replies, losing
// some as Lose asks.
func (p *Proxy) pipe(dst, src net.Conn, replies bool) {
	defer p.wg.Done()
	defer func() { _ = dst.Close(); _ = src.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			resumed := p.resumed
			p.mu.Unlock()
			if resumed != nil {
				<-resumed
			}
			if replies && rand.Int64N(1e6) < p.loss.Load() {
				return // the reply is lost
			}
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
