// Command echo is the tiny HTTP server the services tests run in a FROM
// scratch image: it answers with its MESSAGE and the content of FILE, so a
// test can tell which tree's copy of a service answered.
//
//	LISTEN      address to serve (default :80)
//	MESSAGE     text to answer with
//	FILE        a mounted file whose content is added to the answer
//	SLOW_START  a duration to sleep before listening
//	FAIL        exit with code 3 at once when set
//	DONE        exit with code 0 at once when set, as a finished job does
//
// `echo -check` is the health check: it GETs /health on LISTEN.
package main

import (
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	listen := os.Getenv("LISTEN")
	if listen == "" {
		listen = ":80"
	}
	if len(os.Args) > 1 && os.Args[1] == "-check" {
		c := http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get("http://127.0.0.1" + listen[strings.LastIndex(listen, ":"):] + "/health")
		if err != nil || resp.StatusCode != http.StatusOK {
			fmt.Println("not healthy:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv("FAIL") != "" {
		fmt.Println("failing on purpose")
		os.Exit(3)
	}
	if os.Getenv("DONE") != "" {
		fmt.Println("done")
		os.Exit(0)
	}
	// As PID 1 the server gets no default SIGTERM handling: stop at once,
	// as a real service does, instead of making docker wait out its timeout.
	// IGNORE_TERM plays a service that does not stop on SIGTERM, which
	// only a kill ends.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for range stop {
			if os.Getenv("IGNORE_TERM") == "" {
				os.Exit(0)
			}
		}
	}()
	if d, err := time.ParseDuration(os.Getenv("SLOW_START")); err == nil {
		time.Sleep(d)
	}
	http.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		body := ""
		if f := os.Getenv("FILE"); f != "" {
			b, err := os.ReadFile(f)
			if err != nil {
				body = "unreadable: " + err.Error()
			} else {
				body = strings.TrimSpace(string(b))
			}
		}
		fmt.Fprintf(w, "message=%s file=%s\n", os.Getenv("MESSAGE"), body)
	})
	fmt.Println("listening on", listen)
	if err := http.ListenAndServe(listen, nil); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
}
