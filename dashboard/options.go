package dashboard

import (
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/internal/netaddr"
)

// Options are the board's `dashboard:` section.
type Options struct {
	Enabled      bool          `yaml:"enabled"`
	Listen       string        `yaml:"listen"`
	Users        []User        `yaml:"users"`
	Tokens       []Token       `yaml:"tokens"`
	TLS          TLS           `yaml:"tls"`
	Session      time.Duration `yaml:"session"`
	History      time.Duration `yaml:"history"`
	ClientBuffer int           `yaml:"client_buffer"`
	MaxClients   int           `yaml:"max_clients"`
}

// User logs in with a name and a password.
type User struct {
	Name           string `yaml:"name"`
	PasswordBcrypt string `yaml:"password_bcrypt"`
	Role           string `yaml:"role"`
}

// Token is a bearer token, kept as its SHA-256 so the board file does not
// hold it.
type Token struct {
	SHA256 string `yaml:"sha256"`
	Role   string `yaml:"role"`
}

// TLS serves HTTPS when both files are given.
type TLS struct {
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

// Roles, and the permissions each is granted in the tools registry.
const (
	RoleViewer = "viewer"
	RoleAdmin  = "admin"
)

var roleGrants = map[string][]string{RoleViewer: {"read"}, RoleAdmin: {"*"}}

// DefaultOptions are what a present, empty `dashboard:` block means.
func DefaultOptions() Options {
	return Options{Enabled: true, Listen: "127.0.0.1:8080", Session: 12 * time.Hour, History: 10 * time.Minute,
		ClientBuffer: 256, MaxClients: 16}
}

var userRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$`)

// decodeOptions reads and checks the block; errors point at its keys.
// Relative TLS paths are read from dir, the board file's folder.
func decodeOptions(b *board.Config, dir string) (Options, error) {
	o := DefaultOptions()
	blk := b.Dashboard
	if err := blk.Decode(&o); err != nil {
		return o, err
	}
	var errs []string
	bad := func(key, format string, args ...any) {
		errs = append(errs, blk.Errorf(key, format, args...).Error())
	}
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		bad("listen", "want host:port, e.g. 127.0.0.1:8080")
	} else if !netaddr.IsLoopback(host) && len(o.Users) == 0 && len(o.Tokens) == 0 {
		bad("listen", "not loopback: give users (bcrypt passwords) or tokens, or listen on 127.0.0.1")
	}
	seen := map[string]bool{}
	for i, u := range o.Users {
		k := fmt.Sprintf("users[%d]", i)
		if !userRE.MatchString(u.Name) {
			bad(k+".name", "want 1-64 letters, digits, _.@-")
		} else if u.Name == tokenUser || u.Name == localUser {
			bad(k+".name", "reserved (token logins and the local visitor)")
		} else if seen[u.Name] {
			bad(k+".name", "used twice")
		}
		seen[u.Name] = true
		if !strings.HasPrefix(u.PasswordBcrypt, "$2") || len(u.PasswordBcrypt) != 60 {
			bad(k+".password_bcrypt", "not a bcrypt hash (60 characters starting $2; make one with htpasswd -nbBC 10 \"\" PASSWORD)")
		}
		if roleGrants[u.Role] == nil {
			bad(k+".role", "want viewer or admin")
		}
	}
	for i, t := range o.Tokens {
		k := fmt.Sprintf("tokens[%d]", i)
		if h, err := hex.DecodeString(t.SHA256); err != nil || len(h) != 32 {
			bad(k+".sha256", "want the token's SHA-256 as 64 hex digits (sha256sum)")
		}
		if roleGrants[t.Role] == nil {
			bad(k+".role", "want viewer or admin")
		}
	}
	if (o.TLS.Cert == "") != (o.TLS.Key == "") {
		bad("tls", "give both cert and key, or neither")
	}
	for _, f := range []struct {
		key  string
		path *string
	}{{"tls.cert", &o.TLS.Cert}, {"tls.key", &o.TLS.Key}} {
		if *f.path == "" {
			continue
		}
		if !filepath.IsAbs(*f.path) {
			*f.path = filepath.Join(dir, *f.path)
		}
		if _, err := os.Stat(*f.path); err != nil {
			bad(f.key, "no such file (relative paths are read from the board file's folder)")
		}
	}
	if o.Session < time.Minute {
		bad("session", "want ≥ 1m")
	}
	if o.History < 0 || o.History > 24*time.Hour {
		bad("history", "want 0..24h")
	}
	if o.ClientBuffer < 16 || o.ClientBuffer > 65536 {
		bad("client_buffer", "want 16..65536")
	}
	if o.MaxClients < 1 || o.MaxClients > 1024 {
		bad("max_clients", "want 1..1024")
	}
	if len(errs) > 0 {
		return o, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return o, nil
}

// authRequired: with users or tokens every request must be logged in.
func (o Options) authRequired() bool { return len(o.Users) > 0 || len(o.Tokens) > 0 }
