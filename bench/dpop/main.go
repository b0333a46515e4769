// Command dpop measures what a DPoP proof costs: proofs signed per second
// on one core by perfgate's signer (an ES256 JWS with its jwk header, as
// RFC 9449 asks), beside openssl's raw ECDSA P-256 signatures per second in
// the same run (`openssl speed ecdsap256`, the peer; a proof is one such
// signature plus the JSON and base64 around it), and the ratio. It also
// times taking a proof from a filled pool, which is all a send pays. It
// prints the load average beside the figures, since other work on the
// machine slows every one of them.
//
//	go run ./bench/dpop [-seconds 3]
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/dpop"
)

func main() {
	seconds := flag.Int("seconds", 3, "how long each measurement runs")
	flag.Parse()
	if err := run(time.Duration(*seconds) * time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "bench/dpop:", err)
		os.Exit(1)
	}
}

func run(d time.Duration) error {
	// One core: the figure says what one core can sign, whatever else
	// the machine has.
	runtime.GOMAXPROCS(1)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("making a key: %w", err)
	}
	s, err := dpop.NewSigner(key, "GET", "http://127.0.0.1:8080/fhir/Patient/$summary", "an-access-token-of-forty-bytes-or-so-xx")
	if err != nil {
		return err
	}
	fmt.Println("load average before:", loadavg())
	n, elapsed := 0, time.Duration(0)
	for start := time.Now(); elapsed < d; elapsed = time.Since(start) {
		if _, err := s.Sign(); err != nil {
			return err
		}
		n++
	}
	ours := float64(n) / elapsed.Seconds()
	fmt.Printf("perfgate proofs (ES256 JWS, jwk header, ath): %.0f/s on one core (%d in %s, %.1f us each)\n", ours, n, elapsed.Round(time.Millisecond), elapsed.Seconds()/float64(n)*1e6)

	peer, err := opensslSigns(d)
	if err != nil {
		fmt.Println("openssl speed ecdsap256: not run:", err)
	} else {
		fmt.Printf("openssl raw ECDSA P-256 signatures: %.0f/s on one core\n", peer)
		fmt.Printf("ratio perfgate proofs / openssl signatures: %.2f\n", ours/peer)
	}

	// What a send pays: a take from a pool that is ahead.
	p := dpop.Start(context.Background(), s, dpop.DefaultDepth, 0)
	defer p.Stop()
	takes := dpop.DefaultDepth
	t0 := time.Now()
	for range takes {
		if _, err := p.Take(); err != nil {
			return err
		}
	}
	took := time.Since(t0)
	fmt.Printf("taking a ready proof from the pool: %.2f us each (%d takes, %d signed on the spot)\n", took.Seconds()/float64(takes)*1e6, takes, p.Stats().Inline)
	fmt.Println("load average after:", loadavg())
	return nil
}

// opensslSigns runs the peer on one core and reads its sign/s column.
func opensslSigns(d time.Duration) (float64, error) {
	secs := max(1, int(d.Seconds()))
	ctx, cancel := context.WithTimeout(context.Background(), 4*d+20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "openssl", "speed", "-seconds", strconv.Itoa(secs), "ecdsap256").Output()
	if err != nil {
		return 0, fmt.Errorf("running openssl speed: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.Contains(line, "ecdsa (nistp256)") {
			continue
		}
		f := strings.Fields(line)
		// "256 bits ecdsa (nistp256) 0.0000s 0.0001s 51956.5 16615.6"
		if len(f) >= 8 {
			return strconv.ParseFloat(f[len(f)-2], 64)
		}
	}
	return 0, fmt.Errorf("openssl speed printed no ecdsa (nistp256) line")
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return strings.TrimSpace(string(b))
	}
	return strings.Join(f[:3], ", ")
}
