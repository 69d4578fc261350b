package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/tickscope/tickscope/internal/htmlreport"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

//go:embed static
var static embed.FS

// Server is the page's HTTP handler and what the page holds and runs.
type Server struct {
	o    Options
	host seam.Host
	// token is this run's secret; addr the listener's "127.0.0.1:port" and
	// origin the page's own origin, "http://" + addr.
	token, addr, origin string
	files               fs.FS

	// ctx ends when the server closes: the event streams, the job and the
	// hold end with it.
	ctx    context.Context
	cancel context.CancelFunc

	mu   sync.Mutex
	held *holding
	// holdPending reserves the one hold slot while a hold is requested
	// and checked, before held is set.
	holdPending bool
	// releasing is set while Release withdraws the held setting: held
	// stays set until it is withdrawn, so that no state says nothing is
	// held while it still is.
	releasing bool
	job       *job
	jobs      int
	changed   chan struct{} // closed and replaced when the state changes
	// recommended is the last bench's recommendation, which Hold offers.
	recommended *timerinfo.Setting
	// startup is the startup holder as last read, and when (reading it on
	// Windows is a call to the Task Scheduler service, too slow for every
	// second).
	startup startupCache
	holders whoCache
	// loaded removes the browser's launcher page (Run) once the page has
	// loaded: the first event stream calls it; nil with --no-browser.
	loaded func()
	// closed is set once Close has released everything.
	closed bool
}

// tokenBytes is the token's entropy: 256 bits.
const tokenBytes = 32

// New makes the server of a run listening on addr, with a new token.
func New(o Options, addr string) (*Server, error) {
	secret := make([]byte, tokenBytes)
	if _, err := rand.Read(secret); err != nil {
		return nil, &seam.OSError{Call: "crypto/rand", Err: err}
	}
	files, err := fs.Sub(static, "static")
	if err != nil {
		return nil, err
	}
	host := o.Host
	if o.Scenario != "" {
		host, o.System = newSerialHost(host), simulatedSystem()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		o: o, host: host, files: files,
		token: base64.RawURLEncoding.EncodeToString(secret), addr: addr, origin: "http://" + addr,
		ctx: ctx, cancel: cancel, changed: make(chan struct{}),
	}, nil
}

// URL is the page's address, with the token: the one place it is shown.
func (s *Server) URL() string { return s.origin + "/" + s.token + "/" }

// Close ends the event streams, stops a running job and releases what the
// page holds, waiting until it is released.
func (s *Server) Close() {
	s.cancel()
	s.mu.Lock()
	h, j := s.held, s.job
	s.held, s.closed = nil, true
	s.mu.Unlock()
	if j != nil {
		j.stop()
		<-j.done
	}
	if h != nil {
		h.release()
	}
}

// notify wakes the event streams: the state changed.
func (s *Server) notify() {
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// The headers of every answer: nothing but the page's own files and
// streams may load or run (the charts are inline SVG, which needs inline
// style attributes), no framing, no referrer, no caching.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options":  "nosniff",
	"X-Frame-Options":         "DENY",
	"Referrer-Policy":         "no-referrer",
	"Cache-Control":           "no-store",
}

// ServeHTTP checks every request against the rules in the package doc,
// then serves it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, v := range securityHeaders {
		w.Header().Set(k, v)
	}
	// Every refusal is the same bare 403, so that none tells what was
	// wrong to whoever is probing.
	if r.Host != s.addr {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	rest, ok := s.authorised(r.URL.Path)
	if !ok {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	if action, ok := strings.CutPrefix(rest, "api/"); ok {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "actions are POST only", http.StatusMethodNotAllowed)
			return
		}
		if r.Header.Get("Origin") != s.origin {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			http.Error(w, "actions take a JSON body", http.StatusUnsupportedMediaType)
			return
		}
		s.act(w, r, action)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch rest {
	case "":
		s.file(w, "index.html", "text/html; charset=utf-8")
	case "app.js":
		s.file(w, rest, "text/javascript; charset=utf-8")
	case "style.css":
		s.file(w, rest, "text/css; charset=utf-8")
	case "favicon.ico":
		w.Header().Set("Content-Type", "image/x-icon")
		w.Write(trayIcon())
	case "chart.css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Write([]byte(htmlreport.Style))
	case "events":
		s.events(w, r)
	case "result":
		s.result(w, r)
	default:
		http.NotFound(w, r)
	}
}

// authorised checks that path starts with /TOKEN/, comparing the token in
// constant time, and returns the rest.
func (s *Server) authorised(path string) (rest string, ok bool) {
	p, found := strings.CutPrefix(path, "/")
	if !found {
		return "", false
	}
	segment, rest, found := strings.Cut(p, "/")
	if !found || subtle.ConstantTimeCompare([]byte(segment), []byte(s.token)) != 1 {
		return "", false
	}
	return rest, true
}

func (s *Server) file(w http.ResponseWriter, name, contentType string) {
	data, err := fs.ReadFile(s.files, name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Write(data)
}

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
