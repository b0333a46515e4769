package contract

// The placeholders perfgate fills in an arm's command, environment, config
// and URLs, each with its own value per arm. The gate contract, the arms
// file and the flags of perfgate ab all write them; which of them a given
// field allows is said where that field is checked.
const (
	// PortPlaceholder is the arm's port, a free one perfgate picks when
	// the arm names none.
	PortPlaceholder = "@PORT@"
	// DirPlaceholder is the arm's work directory (absolute).
	DirPlaceholder = "@DIR@"
	// BinPlaceholder is the binary the contract's build wrote.
	BinPlaceholder = "@BIN@"
	// ConfigPlaceholder is the arm's rendered config file.
	ConfigPlaceholder = "@CONFIG@"
)

// DefaultURL is where the load goes when an arm names no URL: its port on
// loopback, over plain HTTP.
const DefaultURL = "http://127.0.0.1:" + PortPlaceholder
