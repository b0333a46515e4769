package exit

import (
	"bytes"
	"errors"
	"flag"
	"strings"
)

// ParseFlags parses args into fs and refuses a bad flag or value (exit 2)
// in one message naming the flag set: the flag package prints a refused
// flag and the whole usage itself before the caller could print the
// refusal, so a value came out twice and the message was lost in the
// usage. What it prints is held back and shown only for -h, whose
// flag.ErrHelp is returned as it is.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	var held bytes.Buffer
	fs.SetOutput(&held)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		_, _ = out.Write(held.Bytes())
		return err
	}
	if err != nil {
		return Refusef("%s: %v (see `%s -h`)", fs.Name(), err, fs.Name())
	}
	return nil
}

// Line is err as program prints it, under one prefix: a message that
// names the program already ("perfgate run: ...", from ParseFlags's flag
// set named for its command) is not prefixed a second time.
func Line(program string, err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, program+" ") || strings.HasPrefix(msg, program+":") {
		return msg
	}
	return program + ": " + msg
}

// NoArguments refuses (exit 2) a word the flags did not take, for a
// command whose every setting is a flag: the flag package stops at the
// first word that is not a flag, so `--store false` leaves "false" and
// every flag after it unread, and the command would run with settings
// the command line did not ask for.
func NoArguments(fs *flag.FlagSet) error {
	if fs.NArg() == 0 {
		return nil
	}
	return Refusef("%s: unexpected argument %q: every setting is a flag, and a flag's value follows it or an = (--store=false); see `%s -h`", fs.Name(), fs.Arg(0), fs.Name())
}
