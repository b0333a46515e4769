package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// runTarget serves until stdin closes. "trivial" answers every request at
// once with a fixed response from a lean HTTP/1.1 loop, so the generator,
// not the target, is what a ceiling run measures; "stall" holds every
// request arriving in the first 400 ms of each 2 s until the 400 ms mark.
func runTarget(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: target trivial|stall")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(l.Addr().String())
	go func() { io.Copy(io.Discard, os.Stdin); l.Close() }()
	switch args[0] {
	case "trivial":
		for {
			c, err := l.Accept()
			if err != nil {
				return nil
			}
			go trivial(c)
		}
	case "stall":
		t0 := time.Now()
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if c := time.Since(t0) % (2 * time.Second); c < 400*time.Millisecond {
				time.Sleep(400*time.Millisecond - c)
			}
		})}
		srv.Serve(l)
		return nil
	}
	return fmt.Errorf("unknown target %q", args[0])
}

var okResponse = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")

func trivial(c net.Conn) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 4096)
	for {
		for { // request head up to the empty line; the benchmarks send GETs
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(line) <= 2 {
				break
			}
		}
		if _, err := c.Write(okResponse); err != nil {
			return
		}
	}
}
