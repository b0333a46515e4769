package servicetest

import (
	"fmt"
	"strings"
)

// Generated returns the files of an n-service project in depends_on chains
// of five, each service mounting a config file of its own and publishing a
// port on 127.0.0.1; mark goes into the first chain's config file only, so
// two marks differ in exactly one group.
func Generated(n int, mark string) map[string]string {
	var b strings.Builder
	files := map[string]string{}
	b.WriteString("services:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  svc%03d:\n    image: img:%d\n    environment:\n      INDEX: \"%d\"\n", i, i%7, i)
		fmt.Fprintf(&b, "    volumes: [\"./conf/%03d.conf:/etc/app.conf:ro\"]\n", i)
		fmt.Fprintf(&b, "    ports: [\"127.0.0.1:%d:80\"]\n", 20000+i)
		fmt.Fprintf(&b, "    healthcheck: {test: [\"CMD\", \"/echo\", \"-check\"], interval: 1s}\n")
		if i%5 != 0 {
			fmt.Fprintf(&b, "    depends_on: [svc%03d]\n", i-1)
		}
		body := fmt.Sprintf("index = %d\n", i)
		if i == 0 {
			body += "mark = " + mark + "\n"
		}
		files[fmt.Sprintf("conf/%03d.conf", i)] = body
	}
	files["compose.yaml"] = b.String()
	return files
}
