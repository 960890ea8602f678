// Package mail renders and sends agora's mails: a Sender delivers a Message (SMTP through
// github.com/wneessen/go-mail, or the log when no SMTP server is configured), and Templates
// render the plain-text and HTML bodies of each kind of mail from embedded defaults that the
// operator may override with files of the same names in a directory.
package mail

import (
	"bytes"
	"context"
	"crypto/tls"
	"embed"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	texttemplate "text/template"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Message is one mail, ready to send.
type Message struct {
	// ID is the Message-ID, derived from the mail's cause, so that a mail sent again after a
	// crash carries the same id and receivers can tell it is the same mail.
	ID      string
	To      string
	Subject string
	Text    string // the plain-text body
	HTML    string // the HTML body; "" for none
}

// Sender delivers messages. An error means the message may not have been delivered and may be
// sent again.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// Log is the Sender of a deployment with no SMTP server: it writes each mail, links included,
// to the log, so that a developer can follow them locally.
type Log struct{ Log *slog.Logger }

// Send writes m to the log.
func (l Log) Send(ctx context.Context, m Message) error {
	l.Log.InfoContext(ctx, "MAIL NOT SENT (no -smtp-url): written here instead",
		"to", m.To, "subject", m.Subject, "message_id", m.ID, "text", m.Text)
	return nil
}

// SMTP sends mails through an SMTP server with go-mail.
type SMTP struct {
	from   string
	client *gomail.Client
}

// SMTPOptions configures NewSMTP beyond its URL.
type SMTPOptions struct {
	// TLS is the TLS configuration (its ServerName is set from the URL when empty); nil for
	// the system's roots.
	TLS *tls.Config
	// Timeout bounds each connection. Default 30s.
	Timeout time.Duration
}

// NewSMTP returns a Sender for the server of rawURL, smtp://user:pass@host:port (STARTTLS,
// required; port 587 by default) or smtps://user:pass@host:port (TLS from the start; port 465
// by default). With a user it authenticates (the strongest mechanism the server offers). from
// is the sender's address.
func NewSMTP(rawURL, from string, o SMTPOptions) (*SMTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("smtp url: %w", err)
	}
	if u.Hostname() == "" {
		return nil, errors.New("smtp url: no host")
	}
	if from == "" {
		return nil, errors.New("mail from: an address is required with an SMTP server")
	}
	if err := gomail.NewMsg().From(from); err != nil {
		return nil, fmt.Errorf("mail from: %w", err)
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.TLS != nil {
		tlsConf = o.TLS.Clone()
	}
	if tlsConf.ServerName == "" {
		tlsConf.ServerName = u.Hostname()
	}
	opts := []gomail.Option{gomail.WithTimeout(o.Timeout), gomail.WithTLSConfig(tlsConf)}
	port := 587
	switch u.Scheme {
	case "smtp":
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case "smtps":
		port = 465
		opts = append(opts, gomail.WithSSL())
	default:
		return nil, fmt.Errorf("smtp url: scheme %q: want smtp (STARTTLS) or smtps (TLS)", u.Scheme)
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("smtp url: port %q: %w", p, err)
		}
	}
	opts = append(opts, gomail.WithPort(port))
	if user := u.User.Username(); user != "" {
		pass, _ := u.User.Password()
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(user), gomail.WithPassword(pass))
	}
	c, err := gomail.NewClient(u.Hostname(), opts...)
	if err != nil {
		return nil, fmt.Errorf("smtp client: %w", err)
	}
	return &SMTP{from: from, client: c}, nil
}

// Send delivers m in one SMTP session.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg := gomail.NewMsg()
	if err := msg.From(s.from); err != nil {
		return fmt.Errorf("mail from: %w", err)
	}
	if err := msg.To(m.To); err != nil {
		return fmt.Errorf("mail to: %w", err)
	}
	msg.Subject(m.Subject)
	if m.ID != "" {
		msg.SetMessageIDWithValue(m.ID)
	}
	msg.SetDate()
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	if err := s.client.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("send mail %s: %w", m.ID, err)
	}
	return nil
}

//go:embed templates/*
var defaults embed.FS

// Kinds of mail, each with a template <kind>.txt (its first line the subject, the rest the
// plain-text body) and <kind>.html (the HTML body).
const (
	KindVerify = "verify" // confirm an email address
	KindReset  = "reset"  // reset a password
)

// Data is what a template may use.
type Data struct {
	Site    string // the public URL of the site
	Name    string // the account's name
	Link    string // the link the mail is for
	Expires string // when the link expires, e.g. "in 1h0m0s (2025-01-02 15:04 UTC)"
}

// Templates renders mails.
type Templates struct {
	text map[string]*texttemplate.Template
	html map[string]*htmltemplate.Template
}

// LoadTemplates parses the templates of every kind: a file of dir (when dir is not "") of the
// name <kind>.txt or <kind>.html replaces the embedded default of that name.
func LoadTemplates(dir string) (*Templates, error) {
	t := &Templates{text: map[string]*texttemplate.Template{}, html: map[string]*htmltemplate.Template{}}
	read := func(name string) (string, error) {
		if dir != "" {
			b, err := os.ReadFile(dir + string(os.PathSeparator) + name)
			if err == nil {
				return string(b), nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("mail template: %w", err)
			}
		}
		b, err := defaults.ReadFile("templates/" + name)
		return string(b), err
	}
	for _, kind := range []string{KindVerify, KindReset} {
		src, err := read(kind + ".txt")
		if err != nil {
			return nil, err
		}
		if t.text[kind], err = texttemplate.New(kind + ".txt").Option("missingkey=error").Parse(src); err != nil {
			return nil, fmt.Errorf("mail template %s.txt: %w", kind, err)
		}
		if src, err = read(kind + ".html"); err != nil {
			return nil, err
		}
		if t.html[kind], err = htmltemplate.New(kind + ".html").Option("missingkey=error").Parse(src); err != nil {
			return nil, fmt.Errorf("mail template %s.html: %w", kind, err)
		}
	}
	return t, nil
}

// Render returns the mail of kind for d, addressed to to with the message id id.
func (t *Templates) Render(kind, id, to string, d Data) (Message, error) {
	tt, ht := t.text[kind], t.html[kind]
	if tt == nil || ht == nil {
		return Message{}, fmt.Errorf("mail: no template of kind %q", kind)
	}
	var text, html bytes.Buffer
	if err := tt.Execute(&text, d); err != nil {
		return Message{}, fmt.Errorf("mail template %s.txt: %w", kind, err)
	}
	if err := ht.Execute(&html, d); err != nil {
		return Message{}, fmt.Errorf("mail template %s.html: %w", kind, err)
	}
	subject, body, _ := strings.Cut(text.String(), "\n")
	return Message{ID: id, To: to, Subject: strings.TrimSpace(subject),
		Text: strings.TrimLeft(body, "\n"), HTML: html.String()}, nil
}
